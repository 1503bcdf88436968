"""Parameters that get a gradient but that no optimizer holds: a module replaced
after the optimizer was built (a new head assigned inside the step), or an optimizer
built over part of the model. Their gradients are computed at every call and never
applied."""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training import step_lines
from mlsmoke.overfit.training.evidence import STEP_PARAMETERS_UNCHANGED, StepFinding
from mlsmoke.overfit.training.step_function import StepFunction

SHOWN = 4


def outside_the_optimizer(model: torch.nn.Module, optimizer: Any) -> list[str]:
    """Names of the model's parameters with a gradient in no param group."""
    groups = getattr(optimizer, "param_groups", None)
    if not groups:
        return []
    held = {id(p) for group in groups for p in group.get("params", [])}
    return [
        name
        for name, parameter in model.named_parameters()
        if parameter.grad is not None and id(parameter) not in held
    ]


def owning_modules(model: torch.nn.Module, names: list[str]) -> list[str]:
    """The outermost modules whose parameters are all in ``names``; a name no such
    module covers stands for itself."""
    wanted, found, covered = set(names), [], set()
    for prefix, module in model.named_modules():
        if not prefix or any(prefix.startswith(f"{done}.") for done in found):
            continue
        owned = [f"{prefix}.{local}" for local, _ in module.named_parameters()]
        if owned and set(owned) <= wanted:
            found.append(prefix)
            covered.update(owned)
    return found + [name for name in names if name not in covered]


def not_held(
    step: StepFunction, model: torch.nn.Module, names: list[str], new: bool
) -> StepFinding:
    """``names`` got gradients in a call but no optimizer holds them; ``new``:
    some were made after the optimizer was built."""
    modules = owning_modules(model, names)
    shown = ", ".join(repr(m) for m in modules[:SHOWN])
    if len(modules) > SHOWN:
        shown += f", and {len(modules) - SHOWN} more"
    why = (
        "built or replaced after the optimizer was (a new module assigned in the"
        " step or in forward)"
        if new
        else "left out when the optimizer was built"
    )
    steps = [line for line in step_lines.call_lines(step.function, ("step",))
             if "sched" not in line.lower()]  # fmt: skip
    return StepFinding(
        STEP_PARAMETERS_UNCHANGED,
        f"the parameters of {shown} get gradients but are in no param group of the"
        f" optimizer, so optimizer.step() never changes them: {why}",
        steps[0] if steps else step_lines.first_body_line(step.function),
        "build every module once, before the optimizer, and build the optimizer"
        " over model.parameters() (or add the new parameters with"
        " optimizer.add_param_group)",
    )
