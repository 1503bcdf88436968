"""A bounded output made unbounded: the same training with the squashing module whose
output is the model's output (``nn.Sigmoid``, ``nn.Tanh``, ``nn.Hardtanh``) replaced
by ``nn.Identity``. Tests a floor that an output which cannot reach the targets'
range sets.

Found from evidence only: in one forward of a fresh model, the model's output is that
module's output, and a float batch field of the output's size (the targets) holds
values outside the module's range. A squashing call in forward's own code
(``torch.sigmoid(x)``) is no module a copy can swap: ``unsquashed_call.py`` makes
that call return its input instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import batch_fields, seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner
from mlsmoke.overfit.verdict.probes import remember

# Targets this far outside the range (as a fraction of its width) are out of reach;
# closer, a squashed output may still get near enough.
OUTSIDE = 0.05


@dataclass(frozen=True)
class BoundedOutput:
    module: str  # the squashing module's qualified name
    kind: str  # its class
    low: float
    high: float
    field: str  # the batch field the targets are in
    lowest: float
    highest: float
    call: int | None = None  # a call in forward's code: its place among the squashes


def find(run: GateRun) -> BoundedOutput | None:
    """The squashing module that bounds the model's output, when the targets lie
    outside its range; None otherwise, or when the forward cannot run."""
    return remember(run, "bounded-output", lambda: _find(run))


def check(run: GateRun, found: BoundedOutput) -> runner.Outcome:
    change = f"with the output's {found.kind} ({found.module}) removed"
    return runner.probe(
        run, change, model_factory=_without(run.model_factory, found.module)
    )


def _range(module: nn.Module) -> tuple[float, float] | None:
    if isinstance(module, nn.Sigmoid):
        return 0.0, 1.0
    if isinstance(module, nn.Tanh):
        return -1.0, 1.0
    if isinstance(module, nn.Hardtanh):
        return float(module.min_val), float(module.max_val)
    return None


def _find(run: GateRun) -> BoundedOutput | None:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
        with seeded(run), torch.no_grad(), _squashed(model) as seen:
            forward_probes.loss_of(run, model, batch)
    except Exception:
        return None
    output = forward_probes.logits_of(seen.get("", (None, None))[1])
    if output is None:
        return None
    for name, (module, value) in seen.items():
        bounds = _range(module) if name else None
        if bounds is not None and same_values(value, output):
            return _with_targets(name, module, bounds, output, batch)
    return None


@contextmanager
def _squashed(model: nn.Module) -> Iterator[dict[str, tuple[nn.Module, Any]]]:
    """Each squashing module's last output, by name; the model's own under ""."""
    seen: dict[str, tuple[nn.Module, Any]] = {}

    def recorder(name: str) -> Callable[..., None]:
        def record(module: nn.Module, args: tuple, output: Any) -> None:
            seen[name] = (module, output)

        return record

    handles = [
        module.register_forward_hook(recorder(name))
        for name, module in model.named_modules()
        if name == "" or _range(module) is not None
    ]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def same_values(value: Any, output: torch.Tensor) -> bool:
    """The model's output is this tensor, or a reshaped view of it."""
    return (
        isinstance(value, torch.Tensor)
        and value.numel() == output.numel()
        and value.untyped_storage().data_ptr() == output.untyped_storage().data_ptr()
    )


def _with_targets(
    name: str, module: nn.Module, bounds: tuple[float, float], output: Any, batch: Any
) -> BoundedOutput | None:
    outside = targets_outside(bounds, output, batch)
    if outside is None:
        return None
    return BoundedOutput(name, type(module).__name__, *bounds, *outside)


def targets_outside(
    bounds: tuple[float, float], output: torch.Tensor, batch: Any
) -> tuple[str, float, float] | None:
    """The batch field of the output's size (the targets) whose values lie outside
    ``bounds``, with its lowest and highest value; None when none does."""
    low, high = bounds
    margin = OUTSIDE * (high - low)
    for field, value in batch_fields(batch):
        if not _targets_like(value, output):
            continue
        lowest, highest = float(value.min()), float(value.max())
        if lowest < low - margin or highest > high + margin:
            return field, lowest, highest
    return None


def _targets_like(value: Any, output: torch.Tensor) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and value.is_floating_point()
        and value.numel() == output.numel()
        and value is not output
    )


def _without(factory: Callable[[], Any], name: str) -> Callable[[], Any]:
    def build() -> Any:
        model = factory()
        parent, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent), child, nn.Identity())
        return model

    return build
