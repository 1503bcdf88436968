"""``too-slow``: the loss falls steadily, and the decay fitted to its tail reaches the
target, but later than the steps allowed. Estimates when. (A fitted floor above the
target is ``not-learning``: no step budget gets there.)"""

from __future__ import annotations

from mlsmoke.overfit.verdict import curve, curve_measures
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "too-slow"


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not evidence.stopped_short(4):
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    if reading.shape != curve.FALLING_TOO_SLOWLY or reading.steps_needed is None:
        return None
    needed = reading.steps_needed
    stopped = (
        f"the timeout ({run.settings.timeout:g} s)"
        if evidence.timed_out
        else f"max-steps ({evidence.max_steps})"
    )
    progress = curve_measures.relative_progress(evidence.losses, evidence.target)
    return Diagnosis(
        CODE,
        f"the loss falls steadily but needs about {needed} steps; it stopped at"
        f" {stopped}",
        [
            reading.reason,
            f"covered {100 * progress:.0f}% of the way to the target"
            f" {evidence.target:.4g} in {evidence.steps} steps",
        ],
        [
            f"allow more steps (max-steps = {_round_up(needed)}), or use the pr tier",
            "memorize fewer examples: a handful is enough for the gate",
            "if a bigger lr diverges, the model may be ill-conditioned: normalize the"
            " inputs, add normalization layers",
        ],
    )


def _round_up(steps: int) -> int:
    magnitude = 10 ** max(len(str(steps)) - 2, 1)
    return -(-int(steps * 1.2) // magnitude) * magnitude
