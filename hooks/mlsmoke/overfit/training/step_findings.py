"""What each broken invariant of a step function says: the finding, the line the fix
belongs at, and the fix. Plain decisions over what ``step_watch.py`` observed; the step
function's source is read (never run) for the lines of calls that did not happen."""

from __future__ import annotations

import math

from mlsmoke.overfit.training import step_lines
from mlsmoke.overfit.training.evidence import (
    STEP_CLIP_AFTER_STEP,
    STEP_EVAL_MODE,
    STEP_GRADIENTS_ACCUMULATE,
    STEP_NO_BACKWARD,
    STEP_NO_GRADIENT,
    STEP_PARAMETERS_UNCHANGED,
    STEP_SCHEDULER_ORDER,
    STEP_UNDIVIDED_ACCUMULATION,
    STEP_UPDATE_BEFORE_BACKWARD,
    StepFinding,
)
from mlsmoke.overfit.training.step_function import StepFunction


def gradients_accumulate(
    index: int, passes: int, accumulate: int, stepped: bool, line: str | None
) -> StepFinding:
    """Call ``index``'s backward added to ``passes`` earlier ones, past an update
    (``stepped``) or past the declared ``accumulate``."""
    held = f"{passes} backward pass{'es' if passes > 1 else ''} already in .grad"
    held += (", already applied by optimizer.step()" if stepped
             else f", accumulate = {accumulate}")  # fmt: skip
    return StepFinding(
        STEP_GRADIENTS_ACCUMULATE,
        f"the gradients of call {index} were added to those of earlier calls ({held}):"
        " optimizer.zero_grad() is never called, or in the wrong place",
        line,
        "call optimizer.zero_grad() before loss.backward()",
    )


def no_graph(number: bool, line: str | None) -> StepFinding:
    """backward raised on a loss without a graph; ``number``: a Python number."""
    what = ("that is a Python number (.item() or float()): it has no graph" if number
            else "with no graph: computed under torch.no_grad() or"
            " torch.inference_mode(), or detached (.detach(), .data)")  # fmt: skip
    return StepFinding(
        STEP_NO_GRADIENT,
        f"the step function called backward on a loss {what}",
        line,
        "compute the loss with gradients enabled and call backward on the tensor"
        " itself",
    )


def no_backward(step: StepFunction, calls: int) -> StepFinding:
    written = step_lines.call_lines(step.function, ("backward",))
    if written:
        message = (f"no gradient reached any of the model's parameters in {calls}"
                   " calls: its backward is called on a loss the model's parameters"
                   " do not feed, or never runs")  # fmt: skip
    else:
        message = "the step function never calls backward(): nothing trains"
    return StepFinding(
        STEP_NO_BACKWARD,
        message,
        written[0] if written else step_lines.first_body_line(step.function),
        "compute the loss from the model's output and call loss.backward() before"
        " optimizer.step()",
    )


def unchanged(
    step: StepFunction, calls: int, cleared: bool, stepped: bool, line: str | None
) -> StepFinding:
    """Parameters got gradients but no update changed them: ``cleared``, the
    gradients were gone at the update; ``stepped``, the gate's optimizer stepped."""
    steps = step_lines.call_lines(step.function, ("step",))
    told = [found for found in steps if "sched" not in found.lower()]
    fix = ("build the optimizer over this model's parameters, after the model, and"
           " call optimizer.step() after loss.backward()")  # fmt: skip
    if cleared:
        told = step_lines.call_lines(step.function, ("zero_grad",)) or told
        why = (
            "the gradients are cleared between loss.backward() and"
            " optimizer.step(): optimizer.zero_grad() is in the wrong place"
        )
        fix = "call optimizer.zero_grad() before loss.backward(), not after it"
    elif stepped or told:
        why = (
            "the optimizer it steps does not hold the model's parameters (built"
            " over another, or an earlier, model)"
        )
    else:
        why = "optimizer.step() is never called"  # fmt: skip
    return StepFinding(
        STEP_PARAMETERS_UNCHANGED,
        f"the parameters that got gradients did not change in {calls} calls: {why}",
        told[0] if told else line,
        fix,
    )


def eval_mode(step: StepFunction, index: int, modules: list[str]) -> StepFinding:
    return StepFinding(
        STEP_EVAL_MODE,
        f"the model ran in eval mode during call {index} of the step function, so its"
        f" {', '.join(modules)} behave as at inference; the model arrives as the"
        " project's loop gets it, and nothing calls model.train() (after a validation"
        " pass, or a from_pretrained model)",
        step_lines.first_body_line(step.function),
        "call model.train() at the top of the step function",
    )


def clip_after_step(step: StepFunction, update: str | None) -> StepFinding:
    clips = ("clip_grad_norm_", "clip_grad_value_")
    clipped = step_lines.call_lines(step.function, clips)
    return StepFinding(
        STEP_CLIP_AFTER_STEP,
        f"the gradients were changed in place after optimizer.step()"
        f" ({update or 'the update'}): clipping (or any change) there has no effect"
        " on the update it was meant for",
        clipped[0] if clipped else update,
        "clip the gradients between loss.backward() and optimizer.step()",
    )


def update_before_backward(update: str | None, backward: str | None) -> StepFinding:
    return StepFinding(
        STEP_UPDATE_BEFORE_BACKWARD,
        f"optimizer.step() ({update or 'the update'}) runs before loss.backward()"
        f" ({backward or 'the backward'}) in each call: every update applies the"
        " gradient of the previous call, and the first call's update changes"
        " nothing",
        update,
        "call loss.backward() before optimizer.step(), in the order zero_grad(),"
        " backward(), step()",
    )


def scheduler_order(update: str | None, scheduler: str | None) -> StepFinding:
    return StepFinding(
        STEP_SCHEDULER_ORDER,
        f"scheduler.step() runs before optimizer.step() ({update or 'the update'}), so"
        " the first lr of the schedule is skipped (PyTorch warns about this order"
        " too)",
        scheduler,
        "call scheduler.step() after optimizer.step()",
    )


def undivided(ratio: float, passes: int, line: str | None) -> StepFinding | None:
    """The update applied ``ratio`` times one fresh gradient after ``passes``
    backward passes: near ``passes`` (past its square root, the midpoint between 1
    and ``passes`` on a log scale) when the losses were summed, near 1 when
    averaged; clipping only lowers it."""
    if ratio < math.sqrt(passes):
        return None
    return StepFinding(
        STEP_UNDIVIDED_ACCUMULATION,
        f"the update applied {ratio:.2g} times the gradient of the batch's loss after"
        f" {passes} backward passes: the accumulated losses are summed, not averaged",
        line,
        f"divide each loss by the number of backward passes per update ({passes})"
        " before loss.backward()",
    )
