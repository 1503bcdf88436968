"""A bounded output made by a call in forward's own code made unbounded: the same
training with that call (``torch.sigmoid(x)``, ``torch.tanh``, ``F.softmax``,
``F.hardtanh``) returning its input. Tests the floor that an output squashed by a
function, not by a module, sets when the targets lie outside its range.

Found from evidence only: one forward of a fresh model under a torch function mode
records each squashing call the forward makes, in order; the model's output must be
the last one's output, and a float batch field of the output's size (the targets)
must hold values outside its range. The copy's forward makes the same call, counted
the same way, return its input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner
from mlsmoke.overfit.verdict.interventions.unbounded_output import (
    BoundedOutput,
    same_values,
    targets_outside,
)
from mlsmoke.overfit.verdict.probes import remember

_NAMES: dict[Callable[..., Any], str] = {
    torch.sigmoid: "torch.sigmoid",
    torch.Tensor.sigmoid: "Tensor.sigmoid",
    torch.special.expit: "torch.special.expit",
    torch.tanh: "torch.tanh",
    torch.Tensor.tanh: "Tensor.tanh",
    torch.softmax: "torch.softmax",
    torch.Tensor.softmax: "Tensor.softmax",
    F.softmax: "F.softmax",
    F.hardtanh: "F.hardtanh",
}
_UNIT = (0.0, 1.0)
_SYMMETRIC = (-1.0, 1.0)


def find(run: GateRun) -> BoundedOutput | None:
    """The squashing call whose output is the model's, when the targets lie outside
    its range; None otherwise, or when the forward cannot run."""
    return remember(run, "bounded-output-call", lambda: _find(run))


def check(run: GateRun, found: BoundedOutput) -> runner.Outcome:
    change = f"with {found.kind} in forward returning its input"
    assert found.call is not None
    return runner.probe(
        run, change, model_factory=_without(run.model_factory, found.call)
    )


class _Squashes(TorchFunctionMode):
    """Records each squashing call (name, bounds, output), in order; the call at
    ``passthrough`` returns its input instead."""

    def __init__(self, passthrough: int | None = None) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple[float, float], Any]] = []
        self.passthrough = passthrough

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore
        kwargs = kwargs or {}
        bounds = _bounds(func, args, kwargs)
        if bounds is None:
            return func(*args, **kwargs)
        place = len(self.calls)
        output = args[0] if place == self.passthrough else func(*args, **kwargs)
        self.calls.append((_NAMES[func], bounds, output))
        return output


def _bounds(
    func: Callable[..., Any], args: tuple, kwargs: dict
) -> tuple[float, float] | None:
    name = _NAMES.get(func)
    if name is None or not args or not isinstance(args[0], torch.Tensor):
        return None
    if name.endswith("hardtanh"):
        low = kwargs.get("min_val", args[1] if len(args) > 1 else -1.0)
        high = kwargs.get("max_val", args[2] if len(args) > 2 else 1.0)
        return float(low), float(high)
    return _SYMMETRIC if name.endswith("tanh") else _UNIT


def _find(run: GateRun) -> BoundedOutput | None:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
        squashes = _Squashes()
        with seeded(run), torch.no_grad():
            loss = lambda: forward_probes.loss_of(run, model, batch)  # noqa: E731
            output = _first_output(model, squashes, loss)
    except Exception:
        return None
    logits = forward_probes.logits_of(output)
    if logits is None or not squashes.calls:
        return None
    place = len(squashes.calls) - 1
    name, bounds, value = squashes.calls[place]
    if not same_values(value, logits):
        return None
    outside = targets_outside(bounds, logits, batch)
    if outside is None:
        return None
    where = f"called in {type(model).__name__}.forward"
    return BoundedOutput(where, name, *bounds, *outside, call=place)


def _first_output(
    model: torch.nn.Module, squashes: _Squashes, compute: Callable[[], Any]
) -> Any:
    """The model's first output while ``compute()`` runs, its forward under
    ``squashes`` (the loss's own calls are not the output's)."""
    outputs: list[Any] = []
    forward = model.forward

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if outputs:
            return forward(*args, **kwargs)
        with squashes:
            outputs.append(forward(*args, **kwargs))
        return outputs[0]

    model.forward = recorded  # type: ignore[method-assign]
    try:
        compute()
    finally:
        del model.forward
    return outputs[0] if outputs else None


def _without(factory: Callable[[], Any], call: int) -> Callable[[], Any]:
    def build() -> Any:
        model = factory()
        forward = model.forward

        def unsquashed(*args: Any, **kwargs: Any) -> Any:
            with _Squashes(passthrough=call):
                return forward(*args, **kwargs)

        model.forward = unsquashed
        return model

    return build
