"""Read a loss curve the way the field guide does: rising, exploding, oscillating,
plateauing, levelling off at a floor above the target, or falling too slowly to reach
the target in time.

A falling curve is fitted with an exponential decay to a floor
(:func:`decay_fit.fit_decay`), so "too slow" means the fitted curve reaches the
target, and a floor above the target is a floor whatever the step budget (the same
reading at every tier).

Pure functions of plain floats, so the decisions are tested with plain values. The
curve's measures are in ``curve_measures.py``, the decay fit in ``decay_fit.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlsmoke.overfit.verdict import curve_measures, decay_fit

EXPLODING = "exploding"
RISING = "rising"
OSCILLATING = "oscillating"
PLATEAU = "plateau"
FALLING_TOO_SLOWLY = "falling-too-slowly"
FALLING = "falling"
FLOOR = "floor"
UNBOUNDED_BELOW = "unbounded-below"

# A curve that would need more than this many times the steps it had is a plateau:
# no sensible step budget gets it there.
PLATEAU_STEP_FACTOR = 30
# Growth past the initial loss by this many loss scales is an explosion, not a rise.
EXPLOSION_FACTOR = 4.0
# Swings smaller than this fraction of the loss scale are noise, not oscillation.
SWING_FRACTION = 0.02
# A fitted floor this fraction of the loss scale above the target is out of reach;
# closer, the fit cannot tell, and the curve's own pace decides.
FLOOR_MARGIN = 0.02
# A curve that levels off after covering less than this fraction of the way to the
# target never learned: a plateau, not a floor.
FLOOR_MIN_PROGRESS = 0.1
# A curve is at its floor when what is left to fall is under this fraction of the
# whole fall; before that, it is still on its way (maybe at too low an lr).
FLOOR_SETTLED = 0.1


@dataclass(frozen=True)
class CurveReading:
    shape: str
    reason: str
    steps_needed: int | None = None
    floor: float | None = None  # the fitted floor, for FLOOR


def classify_curve(losses: Sequence[float], target: float | None) -> CurveReading:
    """The shape of a loss curve that did not reach ``target``, with the reason.

    ``losses[0]`` is the loss at init; ``target`` is the absolute loss to reach.
    """
    if len(losses) < 3:
        return CurveReading(PLATEAU, f"only {len(losses)} loss values to read")
    first_bad = curve_measures.first_nonfinite(losses)
    if first_bad is not None:
        return CurveReading(
            EXPLODING, f"the loss became {losses[first_bad]} at step {first_bad}"
        )
    initial, scale = losses[0], curve_measures.loss_scale(losses, target)
    peak = max(losses)
    if peak - initial > EXPLOSION_FACTOR * scale:
        return CurveReading(
            EXPLODING,
            f"the loss grew from {initial:.4g} to {peak:.4g} "
            f"at step {losses.index(peak)}",
        )
    negative_target = target is not None and target < 0  # declared: may go negative
    if curve_measures.is_unbounded_below(losses) and not negative_target:
        return CurveReading(
            UNBOUNDED_BELOW,
            f"the loss fell below zero, from {initial:.4g} to {losses[-1]:.4g}, "
            "and keeps falling",
        )
    reversals = curve_measures.count_reversals(losses, SWING_FRACTION * scale)
    if reversals >= max(3, len(losses) // 6):
        return CurveReading(
            OSCILLATING,
            f"the loss changed direction {reversals} times in {len(losses)} steps "
            f"(between {min(losses):.4g} and {peak:.4g})",
        )
    tail = curve_measures.tail_level(losses)
    if tail > initial + 0.05 * scale:
        return CurveReading(
            RISING, f"the loss rose from {initial:.4g} to {losses[-1]:.4g}"
        )
    return _read_descent(losses, target)


def _read_descent(losses: Sequence[float], target: float | None) -> CurveReading:
    initial, final = losses[0], losses[-1]
    moved = (
        f"the loss went from {initial:.4g} to {final:.4g} in {len(losses) - 1} steps"
    )
    if target is not None and final <= target:
        return CurveReading(FALLING, moved, len(losses) - 1)
    fit = decay_fit.fit_decay(losses)
    if fit is not None and target is not None:
        scale = curve_measures.loss_scale(losses, target)
        out_of_reach = fit.floor - target > FLOOR_MARGIN * scale
        left = curve_measures.tail_level(losses) - fit.floor
        settled = left <= FLOOR_SETTLED * (initial - fit.floor)
        progress = curve_measures.relative_progress
        if out_of_reach and settled and progress(losses, target) >= FLOOR_MIN_PROGRESS:
            return CurveReading(
                FLOOR,
                f"{moved} and levels off: a fitted floor of {fit.floor:.4g}, above"
                f" the target {target:.4g}",
                floor=fit.floor,
            )
        if out_of_reach:  # still falling, slower and slower: a plateau ahead
            return CurveReading(
                PLATEAU,
                f"{moved} and is levelling off toward {fit.floor:.4g}, above the"
                f" target {target:.4g}",
            )
    steps_needed = _steps_needed(losses, target, fit)
    if steps_needed is None or steps_needed > PLATEAU_STEP_FACTOR * len(losses):
        return CurveReading(PLATEAU, f"{moved} and has stopped falling")
    return CurveReading(
        FALLING_TOO_SLOWLY,
        f"{moved}; the fitted curve reaches the target in about {steps_needed}"
        " steps",
        steps_needed,
    )


def _steps_needed(
    losses: Sequence[float], target: float | None, fit: decay_fit.Decay | None
) -> int | None:
    """Total steps to the target: where the fitted decay crosses it, or, when the
    fit cannot tell (a floor at the target), the pace of the curve's second half."""
    if fit is not None and target is not None and fit.floor < target:
        return fit.steps_to(target)
    return curve_measures.estimate_steps_to_target(losses, target)
