"""``not-memorized``: the run ended without reaching the target; the fallback."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import NOT_MEMORIZED, Diagnosis


@diagnoser(NOT_MEMORIZED)
def diagnose(run: GateRun) -> Diagnosis:
    evidence = run.evidence
    losses = evidence.losses
    if losses and not math.isfinite(losses[-1]):
        summary = f"the loss became {losses[-1]} at step {len(losses) - 1}"
    elif evidence.timed_out:
        summary = (
            f"stopped at the timeout ({run.settings.timeout:g} s) after"
            f" {evidence.steps} steps, loss {losses[0]:.4g} -> {losses[-1]:.4g}"
        )
    else:
        summary = (
            f"the loss went from {losses[0]:.4g} to {losses[-1]:.4g} in"
            f" {evidence.steps} steps; the target is {evidence.target:.4g}"
        )
    return Diagnosis(
        NOT_MEMORIZED,
        summary,
        [f"optimizer lr {evidence.lr:g}, {evidence.max_steps} steps allowed"],
        [
            "probe the learning rate first: it causes all four curve patterns",
            "check that gradients reach every parameter and the loss is the right one",
        ],
    )
