"""Where the loss is negated: the project's line whose negation (``-loss``,
``loss.neg()``, ``loss * -1``) makes the very tensor the gate minimizes, read by a
torch function mode over one call of a fresh model. A negation earlier in the
computation (a log-likelihood turned into a loss) is not the loss itself and is
not named."""

from __future__ import annotations

import numbers
import os
import traceback
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from mlsmoke.overfit.verdict import forward_probes, project_frames
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember

_NEGATIONS = {torch.neg, torch.negative, torch.Tensor.neg, torch.Tensor.__neg__}
_PRODUCTS = {torch.mul, torch.Tensor.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__}


def negated_at(run: GateRun) -> str | None:
    """``makemore.py:154: loss = -F.cross_entropy(...)`` where the loss the gate
    minimizes is a negation made in the project's code; None elsewhere (memoized)."""
    return remember(run, "loss-negation", lambda: _negated_at(run))


def _negated_at(run: GateRun) -> str | None:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
        # paths as the project reads them: from where the gate runs
        negations = _Negations(run.evidence.working_directory or os.getcwd())
        with seeded(run), torch.no_grad(), negations:
            loss = forward_probes.loss_of(run, model, batch)
    except Exception:  # the model's own forward: no evidence either way
        return None
    return next((line for made, line in negations.made if made is loss), None)


class _Negations(TorchFunctionMode):
    """Records each scalar a negation returns, with the project's line that made it."""

    def __init__(self, directory: str | None) -> None:
        super().__init__()
        self.made: list[tuple[torch.Tensor, str | None]] = []
        self._directory = directory
        self._libraries = project_frames.library_directories()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore
        result = func(*args, **(kwargs or {}))
        if _negates(func, args) and _is_scalar(result):
            self.made.append((result, self._line()))
        return result

    def _line(self) -> str | None:
        frames = traceback.extract_stack()
        frame = project_frames.innermost_project_frame(frames, self._libraries)
        return (
            None if frame is None else project_frames.frame_line(frame, self._directory)
        )


def _negates(func: Any, args: tuple) -> bool:
    if func in _NEGATIONS:
        return True
    return func in _PRODUCTS and any(
        isinstance(arg, numbers.Real) and arg < 0 for arg in args
    )


def _is_scalar(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.numel() == 1
