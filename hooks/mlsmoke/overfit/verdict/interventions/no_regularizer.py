"""A regularizer's weight 0: the same training with the loss's extra term (an L2 or
entropy penalty, added with a weight) left out of the sum, which tests the floor that
the term sets.

Found from evidence only, where the loss key is a callable: the loss it returns is a
sum of two scalar terms (its last addition, read by a torch function mode over one
call of a fresh model), and one of them keeps its value when the targets (the batch
fields the model's forward is not given) are paired with other samples, while the
other changes: that one is the data term, the first the regularizer. The copy's loss
makes the same addition, counted the same way, return the data term alone.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from mlsmoke.overfit.training.objective import forward_loss
from mlsmoke.overfit.verdict import forward_probes, probes, project_frames
from mlsmoke.overfit.verdict.batch_probes import batch_fields, seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner
from mlsmoke.overfit.verdict.probes import remember

_ADDITIONS = (torch.add, torch.Tensor.add, torch.sub, torch.Tensor.sub)
_SUBTRACTIONS = (torch.sub, torch.Tensor.sub)
CHANGE = "with the regularizer's weight 0"


@dataclass(frozen=True)
class ExtraTerm:
    addition: int  # the place of the loss's last addition among the scalar ones
    kept: int  # the operand (0 or 1) that is the data term
    value: float  # the regularizer's value at init
    loss: float  # the whole loss at init
    targets: tuple[str, ...]  # the fields the data term reads and forward does not
    where: str | None = None  # the project's line that adds it


def find(run: GateRun) -> ExtraTerm | None:
    """The term of the loss that the targets do not move; None when the loss is
    no such sum, or has no loss callable."""
    return remember(run, "extra-loss-term", lambda: _find(run))


def check(run: GateRun, term: ExtraTerm, **overrides: Any) -> runner.Outcome:
    """The copy trained with the data term alone; ``overrides`` are the probe's
    (a target of its own where the main run could resolve none)."""
    loss_fn = _data_term_only(run.loss_fn, term)
    return runner.intervene(
        run,
        CHANGE,
        lambda seconds: run.probe(
            cpu_seconds=seconds,
            timeout=probes.probe_timeout(run),
            loss_fn=loss_fn,
            **overrides,
        ),
    )


class _Sums(TorchFunctionMode):
    """Records each addition or subtraction of two scalar tensors (its operands,
    result, and whether it subtracts), in order; at ``keep`` = (place, operand)
    that addition returns the operand alone."""

    def __init__(
        self,
        keep: tuple[int, int] | None = None,
        lines_from: str | None | bool = False,
    ) -> None:
        super().__init__()
        # (left, right, result, whether it subtracts)
        self.sums: list[tuple[Any, Any, Any, bool]] = []
        self.keep = keep
        self.loss: Any = None  # what the loss callable returned
        # where each addition is made, when asked for: ``lines_from`` is the
        # working directory the paths are shown from (None: absolute), or False
        self.lines: list[str | None] | None = None if lines_from is False else []
        self._directory = None if lines_from is False else lines_from
        self._libraries = (
            project_frames.library_directories() if self.lines is not None else ()
        )

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore
        kwargs = kwargs or {}
        if func not in _ADDITIONS or not _two_scalars(args) or kwargs:
            return func(*args, **kwargs)
        place = len(self.sums)
        if self.keep is not None and self.keep[0] == place:
            result = args[self.keep[1]]
        else:
            result = func(*args, **kwargs)
        self.sums.append((args[0], args[1], result, func in _SUBTRACTIONS))
        if self.lines is not None:
            self.lines.append(self._line())
        return result

    def _line(self) -> str | None:
        frames = traceback.extract_stack()
        frame = project_frames.innermost_project_frame(frames, self._libraries)
        return (
            None if frame is None else project_frames.frame_line(frame, self._directory)
        )


def _two_scalars(args: tuple) -> bool:
    return (
        len(args) == 2
        and all(isinstance(a, torch.Tensor) and a.dim() == 0 for a in args)
        and all(a.is_floating_point() for a in args)
    )


def _find(run: GateRun) -> ExtraTerm | None:
    if run.loss_fn is None:
        return None
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
        targets = _targets(run, model, batch)
        if not targets:
            return None
        first = _sums(run, model, batch, run.evidence.working_directory)
        paired_anew = _rolled(batch, [value for _, value in targets])
        second = _sums(run, model, paired_anew)
    except Exception:
        return None
    term = _extra_term(
        first.sums, second.sums, first.loss, [name for name, _ in targets]
    )
    if term is None or not first.lines:
        return term
    return replace(term, where=first.lines[term.addition])


def _sums(
    run: GateRun,
    model: torch.nn.Module,
    batch: Any,
    lines_from: str | None | bool = False,
) -> _Sums:
    sums = _Sums(lines_from=lines_from)
    with seeded(run), torch.no_grad(), sums:
        sums.loss = forward_probes.loss_of(run, model, batch)
    return sums


def _extra_term(
    first: list, second: list, loss: Any, targets: list[str]
) -> ExtraTerm | None:
    if not first or len(first) != len(second) or first[-1][2] is not loss:
        return None
    place = len(first) - 1
    before = [float(t) for t in first[place][:2]]
    after = [float(t) for t in second[place][:2]]
    moved = [abs(a - b) > 1e-6 * max(1.0, abs(a)) for a, b in zip(before, after)]
    if moved.count(True) != 1 or before[moved.index(False)] == 0:
        return None
    kept = moved.index(True)
    if kept == 1 and first[place][3]:
        return None  # a - b without a is -b: no weight 0 leaves the data term
    extra = before[1 - kept]
    return ExtraTerm(place, kept, extra, float(loss), tuple(targets))


def _targets(
    run: GateRun, model: torch.nn.Module, batch: Any
) -> list[tuple[str, torch.Tensor]]:
    """The batch fields (tensors) that the model's forward is not given."""
    given: list[Any] = []

    def record(module: Any, args: tuple, kwargs: dict) -> None:
        given.extend([*args, *kwargs.values()])

    handle = model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        with seeded(run), torch.no_grad():
            forward_probes.loss_of(run, model, batch)
    finally:
        handle.remove()
    return [
        (name, value)
        for name, value in batch_fields(batch)
        if isinstance(value, torch.Tensor)
        and value.dim() >= 1
        and value.shape[0] > 1
        and not any(value is g for g in given)
    ]


def _rolled(batch: Any, targets: list[torch.Tensor]) -> Any:
    """The batch with each target field paired with the next sample's inputs."""

    def roll(value: Any) -> Any:
        return value.roll(1, 0) if any(value is t for t in targets) else value

    if isinstance(batch, dict):
        return {key: roll(value) for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(roll(value) for value in batch)
    raise TypeError("a batch of another kind: its targets are left as they are")


def _data_term_only(loss_fn: Callable[..., Any] | None, term: ExtraTerm) -> Callable:
    def data_term(model: Any, batch: Any) -> Any:
        with _Sums(keep=(term.addition, term.kept)):
            return forward_loss(loss_fn, model, batch)

    return data_term
