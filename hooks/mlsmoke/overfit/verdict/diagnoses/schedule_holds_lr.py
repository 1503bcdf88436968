"""``schedule-holds-lr``: a training script's schedule kept the lr far below its own
peak for the gate's whole run (a warmup longer than the gate's budget), and the same
script at its peak lr, every step, memorizes. The schedule, not the model, is why.

Checked by an intervention: a probe re-runs the script with every update at the lr
its optimizer was built with. Script mode only: a factory's recipe has no such run.
"""

from __future__ import annotations

import ast

from mlsmoke.overfit.training.script_lr import script_constants
from mlsmoke.overfit.verdict import probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "schedule-holds-lr"
HELD = 0.5  # the schedule never reached this fraction of its peak lr
SCHEDULE_WORDS = ("warmup", "warm_up", "ramp")


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    peak = evidence.unscheduled_lr
    if not evidence.script or not evidence.stopped_short() or not peak:
        return None
    if not evidence.lrs or max(evidence.lrs) >= HELD * peak:
        return None
    if not probes.may_probe(run):
        return None
    flat = probes.at_flat_lr(run)
    if not probes.memorized(flat):
        return None
    names = schedule_variables(run.settings.script or "")
    named = ", ".join(f"{name} = {value:g} ({where})" for name, where, value in names)
    fix = (
        f"shorten it for the gate in [tool.mlsmoke.overfit] args, e.g."
        f" --{names[0][0]}={max(evidence.max_steps // 10, 1)}"
        if names
        else "shorten the warmup for the gate with an argument in"
        " [tool.mlsmoke.overfit] args"
    )
    return Diagnosis(
        CODE,
        f"the schedule in {evidence.script} keeps the lr below"
        f" {max(evidence.lrs):.3g} for all {evidence.steps} steps, under"
        f" {100 * HELD:.0f}% of its peak {peak:g}; at the peak lr the script"
        f" memorizes the batch in {flat.steps} steps",
        [
            f"lr {evidence.lrs[0]:.3g} at step 0, {evidence.lrs[-1]:.3g} at step"
            f" {len(evidence.lrs) - 1}",
            *([f"the schedule's settings: {named}"] if named else []),
            f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g};"
            f" the target is {evidence.target:.4g}",
        ],
        [fix, f"or allow more steps than the warmup (max-steps > {evidence.steps})"],
    )


def schedule_variables(script: str) -> list[tuple[str, str, float]]:
    """The script's top-level numbers named like a warmup: name, file:line, value."""
    try:
        with open(script, "rb") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return []
    return [
        (name, f"{script}:{line}", value)
        for name, line, value in script_constants(tree)
        if any(word in name.lower() for word in SCHEDULE_WORDS)
    ]
