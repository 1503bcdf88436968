"""What a script's gradients show at its updates: which parameters ever got one, and
gradients left over from the last update at the next one's first ``backward()``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from mlsmoke.overfit.training.evidence import STEP_GRADIENTS_ACCUMULATE, StepFinding

if TYPE_CHECKING:
    from mlsmoke.overfit.training.script_points import ScriptWatch


def check_gradients_cleared(watch: ScriptWatch) -> None:
    """At an update's first backward(), the last update's gradients must be gone:
    kept, they are added to this update's (a forgotten or misplaced zero_grad)."""
    evidence, optimizer = watch.evidence, watch.optimizer
    if optimizer is None or any(
        f.code == STEP_GRADIENTS_ACCUMULATE for f in evidence.step_findings
    ):
        return
    kept = [
        parameter
        for group in optimizer.param_groups
        for parameter in group["params"]
        if parameter.grad is not None and bool(parameter.grad.detach().any())
    ]
    if kept:
        evidence.step_findings.append(gradients_not_cleared(watch, len(kept)))


def gradients_not_cleared(watch: ScriptWatch, kept: int) -> StepFinding:
    """The finding, with a fix that respects the script's accumulation."""
    update = len(watch.evidence.losses)
    step_at = f" (at {watch.step_site})" if watch.step_site else ""
    if watch.backwards_per_update > 1:
        fix = (
            "call optimizer.zero_grad(set_to_none=True) once per update, right after"
            f" optimizer.step(){step_at}; not before every micro-batch's backward(),"
            f" which would keep only the last of the {watch.backwards_per_update}"
            " micro-batches' gradients"
        )
    else:
        fix = (
            "call optimizer.zero_grad() once per update: before loss.backward(), or"
            f" right after optimizer.step(){step_at}"
        )
    return StepFinding(
        STEP_GRADIENTS_ACCUMULATE,
        f"at update {update}, {kept} parameters still held the gradients of earlier"
        " updates when backward() was called: they are added to this update's, so"
        " every step applies the sum of all gradients so far",
        watch.step_site or None,
        fix,
    )


def note_gradients(watch: ScriptWatch, optimizer: torch.optim.Optimizer) -> None:
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            if id(parameter) in watch.got_gradient or parameter.grad is None:
                continue
            if bool(parameter.grad.detach().abs().sum() > 0):
                watch.got_gradient.add(id(parameter))


def never_got_gradient(watch: ScriptWatch) -> list[str]:
    """The trainable parameters no update had a gradient for, by name."""
    if watch.optimizer is None:
        return []
    return [
        watch.parameter_names.get(id(parameter), f"param_groups[{index}]")
        for index, group in enumerate(watch.optimizer.param_groups)
        for parameter in group["params"]
        if parameter.requires_grad and id(parameter) not in watch.got_gradient
    ]
