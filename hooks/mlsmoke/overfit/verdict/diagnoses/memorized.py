"""``memorized``: the loss reached its target; the gate passes. A loss that reached
it below zero must also have levelled off (see ``wrong_objective``)."""

from __future__ import annotations

from mlsmoke.overfit.verdict import probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import MEMORIZED, Diagnosis


@diagnoser(MEMORIZED)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not probes.memorized(evidence):
        return None
    reached_at = evidence.bound_check_from
    if reached_at is None:
        return Diagnosis(
            MEMORIZED,
            f"memorized the batch in {evidence.steps} steps:"
            f" loss {evidence.initial_loss:.4g} -> {evidence.final_loss:.4g}"
            f" (target {evidence.target:.4g})",
        )
    return Diagnosis(
        MEMORIZED,
        f"memorized the batch in {reached_at} steps:"
        f" loss {evidence.initial_loss:.4g} -> {evidence.losses[reached_at]:.4g}"
        f" (target {evidence.target:.4g}), and below zero it levels off at"
        f" {evidence.final_loss:.4g}",
    )
