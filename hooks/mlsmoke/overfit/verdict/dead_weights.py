"""Trainable parameters no update had a gradient for, grouped by the modules that own
them, and why, checked by an intervention on an untrained copy of the model: the
module's output is replaced by zeros in one forward, and the model's output compared.

- never called: the forward did not call the module (a pooler a sentence-embedding
  model skips by design);
- cut from the graph: its output changes the model's output, yet no gradient came
  back through it (a ``.detach()``, ``torch.no_grad()`` or ``.data`` on the way);
- unused: called, but its output does not reach the model's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from mlsmoke.overfit.training.batch_objects import tensors_in
from mlsmoke.overfit.training.objective import call_model

NEVER_CALLED = "never called by the forward"
CUT = (
    "cut from the graph: its output reaches the model's output, but no gradient"
    " flows back through it (a .detach(), torch.no_grad() or .data on the way)"
)
UNUSED = "called, but its output does not reach the model's output"
UNKNOWN = "no gradient reached it (the intervention could not run: {})"


@dataclass
class DeadModule:
    """A module whose trainable parameters all went without a gradient."""

    name: str  # "" for parameters that are not all of one module's
    parameters: list[str]
    values: int
    cause: str = ""


def dead_modules(model: torch.nn.Module, dead: set[str]) -> list[DeadModule]:
    """The outermost modules whose trainable parameters are all in ``dead``; the rest
    of ``dead`` under the module that holds each directly."""
    found: list[DeadModule] = []
    covered: set[str] = set()
    for name, module in model.named_modules():
        if not name or any(name.startswith(f"{done.name}.") for done in found):
            continue
        owned = [
            (f"{name}.{local}", p)
            for local, p in module.named_parameters()
            if p.requires_grad
        ]
        if owned and all(full in dead for full, _ in owned):
            found.append(DeadModule(name, [n for n, _ in owned], _count(owned)))
            covered.update(n for n, _ in owned)
    sizes = dict(model.named_parameters())
    for full in sorted(dead - covered):
        parent = full.rpartition(".")[0]
        found.append(
            DeadModule(parent, [full], sizes[full].numel() if full in sizes else 0)
        )
    return found


def _count(owned: list[tuple[str, torch.nn.Parameter]]) -> int:
    return sum(p.numel() for _, p in owned)


def cause_of(model: torch.nn.Module, batch: Any, module_name: str) -> str:
    """Why ``module_name`` got no gradient, by zeroing its output in one forward."""
    try:
        module = model.get_submodule(module_name)
    except AttributeError as error:
        return UNKNOWN.format(error)
    calls: list[int] = []

    def zeroed(module: Any, args: Any, output: Any) -> Any:
        calls.append(1)
        return _zeros_like(output)

    try:
        baseline = _outputs(model, batch)
        handle = module.register_forward_hook(zeroed)
        try:
            changed = _outputs(model, batch)
        finally:
            handle.remove()
    except Exception as error:  # the project's forward: any error is its own
        return UNKNOWN.format(f"{type(error).__name__}: {error}")
    if not calls:
        return NEVER_CALLED
    same = len(baseline) == len(changed) and all(
        torch.equal(a, b) for a, b in zip(baseline, changed)
    )
    return UNUSED if same else CUT


def _outputs(model: torch.nn.Module, batch: Any) -> list[torch.Tensor]:
    state = torch.random.get_rng_state()
    model.eval()
    with torch.no_grad():
        torch.manual_seed(0)
        output = _call(model, batch)
    torch.random.set_rng_state(state)
    return [
        t.detach().float().cpu() for t in tensors_in(output) if t.is_floating_point()
    ]


def _call(model: torch.nn.Module, batch: Any) -> Any:
    """The model called as the gate calls it; for an ``(inputs, targets)`` pair
    whose loss is computed outside the model, called on the inputs alone."""
    try:
        return call_model(model, batch)
    except TypeError:
        if isinstance(batch, (tuple, list)) and len(batch) >= 2:
            return model(batch[0])
        raise


def _zeros_like(output: Any) -> Any:
    if isinstance(output, torch.Tensor):
        return torch.zeros_like(output)
    if isinstance(output, tuple):
        return type(output)(_zeros_like(item) for item in output)
    if isinstance(output, list):
        return [_zeros_like(item) for item in output]
    return output
