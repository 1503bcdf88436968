"""``memorized``, at the floor the batch allows: the loss stopped short of its target
only by what no model can learn, class targets that the inputs do not decide
(``target_ambiguity.py``: sequences that all open with one start token, each first
token a guess). The target is then asked of the part of the loss that can be learned:
the floor plus the same fraction of the rest as the target is of the initial loss.

The raised target is the run's from then on: a pass is memorized for the checks
(dead weights are still named), and a run short of it is judged against it by the
diagnoses that follow, their probes included (a higher lr memorizes such a batch
only down to its floor: the project's own target would refute every cause)."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict import reading_window, target_ambiguity
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import MEMORIZED, Diagnosis


@diagnoser(MEMORIZED)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    initial, target = evidence.initial_loss, evidence.target
    if not evidence.stopped_short(4) or target is None or initial is None:
        return None
    reached = min(_finite(evidence.final_loss), _finite(evidence.eval_loss))
    if not 0 < target < reached < initial:
        return None
    found = target_ambiguity.batch_floor(run)
    if found is None or found.loss <= 0:
        return None
    floor = found.loss
    learnable = raised_target(initial, target, floor)
    evidence.target = learnable  # what the checks and the diagnoses after this judge
    if reached > learnable:
        run.notes.append(
            f"target: {learnable:.4g}, raised from {target:.4g} by the batch's floor"
            f" {floor:.4g} (class targets not decided by what the model reads:"
            f" {reading_window.described(found.reading)})"
        )
        return None
    steps = _first_at_or_below(evidence.losses, learnable, evidence.steps)
    evidence.reached, evidence.reached_at = True, steps
    return Diagnosis(
        MEMORIZED,
        f"memorized the batch as far as its targets allow in {steps} steps:"
        f" loss {initial:.4g} -> {reached:.4g}, above the target {target:.4g} only by"
        f" what no model can learn (the batch's floor {floor:.4g})",
        [
            "some class targets are not decided by what the model is shown to read"
            f" ({reading_window.described(found.reading)}): positions that read the"
            " same inputs (as every sequence's first token, after one start token)"
            f" hold different classes, so the mean cross-entropy cannot fall below"
            f" {floor:.4g}",
            f"judged against {learnable:.4g}: the floor plus the same share of the"
            f" rest ({initial:.4g} - {floor:.4g}) as the target is of the initial"
            " loss",
        ],
        memorized_in=steps,
    )


def raised_target(initial: float, target: float, floor: float) -> float:
    """The target asked of the learnable part of the loss above ``floor``."""
    return floor + (target / initial) * (initial - floor)


def _first_at_or_below(losses: list[float], bar: float, otherwise: int) -> int:
    """The first step whose loss is at or below ``bar``; else ``otherwise``."""
    return next((step for step, loss in enumerate(losses) if loss <= bar), otherwise)


def _finite(loss: float | None) -> float:
    return loss if loss is not None and math.isfinite(loss) else math.inf
