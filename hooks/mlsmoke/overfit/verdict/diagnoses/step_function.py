"""The invariants of the project's step function (``step = "module:train_step"``).

The engine watches the step's first calls (``training/step_watch.py``) and records
each invariant it broke. A broken invariant fails the gate even when the loss
reached its target: a forgotten ``zero_grad`` with Adam, or dropout left off in eval
mode, still memorizes one batch. One diagnoser per code, in order of cause: no
gradient at all first, then what the update did with it.
"""

from __future__ import annotations

from collections.abc import Callable

from mlsmoke.overfit.training.evidence import (
    STEP_CLIP_AFTER_STEP,
    STEP_EVAL_MODE,
    STEP_GRADIENTS_ACCUMULATE,
    STEP_NO_BACKWARD,
    STEP_NO_GRADIENT,
    STEP_PARAMETERS_UNCHANGED,
    STEP_UNDIVIDED_ACCUMULATION,
    STEP_UPDATE_BEFORE_BACKWARD,
    StepFinding,
)
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODES = (
    STEP_NO_GRADIENT,
    STEP_NO_BACKWARD,
    STEP_PARAMETERS_UNCHANGED,
    STEP_GRADIENTS_ACCUMULATE,
    STEP_UNDIVIDED_ACCUMULATION,
    STEP_UPDATE_BEFORE_BACKWARD,
    STEP_CLIP_AFTER_STEP,
    STEP_EVAL_MODE,
)
HEADLINES = {
    STEP_NO_GRADIENT: "calls backward on a loss without a graph",
    STEP_NO_BACKWARD: "sends no gradient to the model's parameters",
    STEP_PARAMETERS_UNCHANGED: "leaves the model's parameters unchanged",
    STEP_GRADIENTS_ACCUMULATE: "adds each step's gradients to the previous ones"
    " (a forgotten zero_grad)",
    STEP_UNDIVIDED_ACCUMULATION: "sums accumulated gradients instead of averaging"
    " them",
    STEP_CLIP_AFTER_STEP: "changes the gradients after the update (clipping after"
    " optimizer.step())",
    STEP_EVAL_MODE: "trains the model in eval mode",
    STEP_UPDATE_BEFORE_BACKWARD: "updates before it computes the gradient"
    " (optimizer.step() before loss.backward())",
}
ACCUMULATION_HELP = (
    "a step that accumulates on purpose declares it: accumulate = N in"
    " [tool.mlsmoke.overfit] (backward passes per optimizer.step())"
)


def _diagnoser(code: str) -> Callable[[GateRun], Diagnosis | None]:
    @diagnoser(code)
    def diagnose(run: GateRun) -> Diagnosis | None:
        finding = next((f for f in run.evidence.step_findings if f.code == code), None)
        return None if finding is None else _diagnosis(run, finding)

    diagnose.__name__ = f"diagnose_{code.replace('-', '_')}"
    return diagnose


def _diagnosis(run: GateRun, finding: StepFinding) -> Diagnosis:
    evidence = run.evidence
    name = evidence.step_function or "the step function"
    lines = [finding.message]
    if finding.where:
        lines.append(f"fix at {finding.where}")
    if evidence.losses:
        lines.append(
            f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g} in"
            f" {evidence.steps} steps"
            + (" (it reached the target all the same)" if evidence.reached else "")
        )
    suggestions = [finding.fix] if finding.fix else []
    accumulating = (STEP_GRADIENTS_ACCUMULATE, STEP_UNDIVIDED_ACCUMULATION)
    if finding.code in accumulating and not evidence.script:
        suggestions.append(ACCUMULATION_HELP)
    summary = f"the step function {name} {HEADLINES[finding.code]}"
    if evidence.script:
        summary = f"the training loop of {evidence.script} {HEADLINES[finding.code]}"
    return Diagnosis(finding.code, summary, lines, suggestions)


DIAGNOSERS = [_diagnoser(code) for code in CODES]
