"""The curve the floor diagnoses start from: a run that stopped short of its target,
its loss on a plateau or levelled off at a floor above it."""

from __future__ import annotations

from mlsmoke.overfit.verdict import curve
from mlsmoke.overfit.verdict.gate_run import GateRun


def stalled_above_target(run: GateRun) -> curve.CurveReading | None:
    """The curve's reading when the run stalled above its target; None otherwise."""
    evidence = run.evidence
    if not evidence.stopped_short():
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    if reading.shape not in (curve.PLATEAU, curve.FLOOR):
        return None
    return reading
