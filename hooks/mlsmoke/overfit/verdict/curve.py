"""Read a loss curve the way the field guide does: rising, exploding, oscillating,
plateauing, levelling off at a floor above the target, or falling too slowly to reach
the target in time.

A falling curve is fitted with an exponential decay to a floor (:func:`fit_decay`),
so "too slow" means the fitted curve reaches the target, and a floor above the target
is a floor whatever the step budget (the same reading at every tier).

Pure functions of plain floats, so the decisions are tested with plain values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

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
# A jump of this fraction of the initial loss in one update is a spike.
SPIKE_FRACTION = 0.5
# A fitted floor this fraction of the loss scale above the target is out of reach;
# closer, the fit cannot tell, and the curve's own pace decides.
FLOOR_MARGIN = 0.02
# A curve that levels off after covering less than this fraction of the way to the
# target never learned: a plateau, not a floor.
FLOOR_MIN_PROGRESS = 0.1
# A curve is at its floor when what is left to fall is under this fraction of the
# whole fall; before that, it is still on its way (maybe at too low an lr).
FLOOR_SETTLED = 0.1
# A fall that keeps this fraction of its pace from one half of a window to the next
# is not levelling off.
STEADY_PACE = 0.75


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
    first_bad = first_nonfinite(losses)
    if first_bad is not None:
        return CurveReading(
            EXPLODING, f"the loss became {losses[first_bad]} at step {first_bad}"
        )
    initial, scale = losses[0], loss_scale(losses, target)
    peak = max(losses)
    if peak - initial > EXPLOSION_FACTOR * scale:
        return CurveReading(
            EXPLODING,
            f"the loss grew from {initial:.4g} to {peak:.4g} "
            f"at step {losses.index(peak)}",
        )
    negative_target = target is not None and target < 0  # declared: may go negative
    if is_unbounded_below(losses) and not negative_target:
        return CurveReading(
            UNBOUNDED_BELOW,
            f"the loss fell below zero, from {initial:.4g} to {losses[-1]:.4g}, "
            "and keeps falling",
        )
    reversals = count_reversals(losses, SWING_FRACTION * scale)
    if reversals >= max(3, len(losses) // 6):
        return CurveReading(
            OSCILLATING,
            f"the loss changed direction {reversals} times in {len(losses)} steps "
            f"(between {min(losses):.4g} and {peak:.4g})",
        )
    tail = tail_level(losses)
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
    fit = fit_decay(losses)
    if fit is not None and target is not None:
        out_of_reach = fit.floor - target > FLOOR_MARGIN * loss_scale(losses, target)
        settled = tail_level(losses) - fit.floor <= FLOOR_SETTLED * (
            initial - fit.floor
        )
        if (
            out_of_reach
            and settled
            and (relative_progress(losses, target) >= FLOOR_MIN_PROGRESS)
        ):
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
    losses: Sequence[float], target: float | None, fit: Decay | None
) -> int | None:
    """Total steps to the target: where the fitted decay crosses it, or, when the
    fit cannot tell (a floor at the target), the pace of the curve's second half."""
    if fit is not None and target is not None and fit.floor < target:
        return fit.steps_to(target)
    return estimate_steps_to_target(losses, target)


@dataclass(frozen=True)
class Decay:
    """``floor + amplitude * exp(-rate * (step - start))``, fitted on a curve's tail."""

    floor: float
    amplitude: float
    rate: float  # per step
    start: int

    def steps_to(self, target: float) -> int | None:
        """The step at which the fitted curve reaches ``target``; None if never."""
        if target <= self.floor or self.amplitude <= 0:
            return None
        if target >= self.floor + self.amplitude:
            return self.start
        steps = math.log(self.amplitude / (target - self.floor)) / self.rate
        return self.start + round(steps)  # an estimate: "about" so many steps


# Rates tried by fit_decay (per step, log-spaced), then refined around the best.
_FIT_RATES = [10 ** (-4 + 4.3 * i / 39) for i in range(40)]
_MAX_FIT_POINTS = 400


def fit_decay(losses: Sequence[float]) -> Decay | None:
    """Least-squares exponential decay to a floor, fitted on the second half of the
    curve; None for a tail too short, non-finite or not falling."""
    start = len(losses) // 2
    tail = list(losses[start:])
    if len(tail) < 4 or not all(math.isfinite(v) for v in tail):
        return None
    stride = max(1, len(tail) // _MAX_FIT_POINTS)
    steps = list(range(0, len(tail), stride))
    values = [tail[i] for i in steps]
    if max(values) - min(values) <= 1e-12 * max(abs(values[0]), 1e-12):
        return Decay(values[-1], 0.0, 1.0, start)  # flat: the floor is its level
    best = min(_FIT_RATES, key=lambda rate: _fit_at(steps, values, rate)[0])
    low, high = math.log(best / 1.3), math.log(best * 1.3)
    for _ in range(20):  # ternary search on log(rate) around the grid's best
        a, b = low + (high - low) / 3, high - (high - low) / 3
        if (
            _fit_at(steps, values, math.exp(a))[0]
            < _fit_at(steps, values, math.exp(b))[0]
        ):
            high = b
        else:
            low = a
    rate = math.exp((low + high) / 2)
    _, floor, amplitude = _fit_at(steps, values, rate)
    if amplitude <= 0:
        return None
    return Decay(floor, amplitude, rate, start)


def _fit_at(
    steps: Sequence[int], values: Sequence[float], rate: float
) -> tuple[float, float, float]:
    """(squared error, floor, amplitude) of the best ``floor + amplitude * e^(-rate
    step)`` through the points: a linear least-squares fit at a fixed rate."""
    xs = [math.exp(-rate * step) for step in steps]
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(values) / n
    var_x = sum((x - mean_x) ** 2 for x in xs)
    if var_x <= 1e-300:
        return math.inf, mean_y, 0.0
    amplitude = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, values)) / var_x
    floor = mean_y - amplitude * mean_x
    error = sum((floor + amplitude * x - y) ** 2 for x, y in zip(xs, values))
    return error, floor, amplitude


def levels_off(values: Sequence[float]) -> bool:
    """Whether a falling stretch of curve decelerates to a level: the second half of
    the window falls at less than STEADY_PACE of the first half's pace. A loss that
    falls at a steady or growing pace (a flipped sign, logits growing without bound)
    does not level off."""
    if len(values) < 4 or not all(math.isfinite(v) for v in values):
        return False
    half = len(values) // 2
    first = values[0] - values[half]
    second = values[half] - values[-1]
    if first <= 0:
        return True  # not falling at all over the first half
    return second < STEADY_PACE * first


def estimate_steps_to_target(
    losses: Sequence[float], target: float | None
) -> int | None:
    """Total steps the curve needs to reach ``target`` at the pace of its second half.

    Positive curves are extrapolated in log space (losses decay roughly
    exponentially); None when the recent pace is flat or rising.
    """
    if target is None or len(losses) < 4:
        return None
    recent = list(losses[len(losses) // 2 :])
    taken = len(losses) - 1  # losses[0] is measured before the first update
    if tail_level(losses) <= target:
        return taken
    in_log_space = target > 0 and min(recent) > 0
    values = [math.log(v) for v in recent] if in_log_space else recent
    goal = math.log(target) if in_log_space else target
    slope = fitted_slope(values)
    if slope >= 0:
        return None
    remaining = (smoothed_last(values) - goal) / -slope
    return taken + max(0, math.ceil(remaining))


def fitted_slope(values: Sequence[float]) -> float:
    """Least-squares slope of ``values`` against their index."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    covariance = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    variance = sum((i - mean_x) ** 2 for i in range(n))
    return covariance / variance


def smoothed_last(values: Sequence[float]) -> float:
    """The last value of the least-squares line through ``values``."""
    n = len(values)
    mean_y = sum(values) / n
    return mean_y + fitted_slope(values) * (n - 1) / 2


def count_reversals(losses: Sequence[float], min_swing: float) -> int:
    """How often the curve changes direction by more than ``min_swing``."""
    reversals, direction, anchor = 0, 0, losses[0]
    for value in losses[1:]:
        move = value - anchor
        if abs(move) < min_swing:
            continue
        new_direction = 1 if move > 0 else -1
        if direction and new_direction != direction:
            reversals += 1
        direction, anchor = new_direction, value
    return reversals


def is_unbounded_below(losses: Sequence[float]) -> bool:
    """The loss went negative and still falls: a flipped sign or a maximized loss."""
    final = losses[-1]
    if final >= 0 or len(losses) < 4:
        return False
    recent = losses[len(losses) // 2 :]
    return fitted_slope(recent) < 0 and final < losses[0] - abs(losses[0])


def loss_scale(losses: Sequence[float], target: float | None) -> float:
    """The size of a meaningful loss change for this curve."""
    initial = losses[0]
    gap = abs(initial - target) if target is not None else 0.0
    return max(abs(initial), gap, 1e-8)


def tail_jitter(losses: Sequence[float]) -> float:
    """How far the second half of the curve strays from its own straight line (the
    root mean square of the residuals): the noise a random forward adds."""
    recent = [v for v in losses[len(losses) // 2 :] if math.isfinite(v)]
    if len(recent) < 3:
        return 0.0
    slope = fitted_slope(recent)
    mean_x, mean_y = (len(recent) - 1) / 2, sum(recent) / len(recent)
    residuals = [v - (mean_y + slope * (i - mean_x)) for i, v in enumerate(recent)]
    return math.sqrt(sum(r * r for r in residuals) / len(residuals))


def tail_level(losses: Sequence[float]) -> float:
    """The median of the last quarter of the curve (robust to one spike)."""
    tail = sorted(losses[-max(1, len(losses) // 4) :])
    return tail[len(tail) // 2]


def early_spike(losses: Sequence[float]) -> int | None:
    """The step of a jump well above the initial loss in the curve's first quarter:
    one update too large, which can kill ReLUs and leave a plateau behind it."""
    initial = losses[0] if losses else 0.0
    if not losses or not math.isfinite(initial):
        return None
    window = losses[1 : max(2, len(losses) // 4)]
    for step, value in enumerate(window, start=1):
        if value > initial + SPIKE_FRACTION * max(abs(initial), 1e-8):
            return step
    return None


def first_nonfinite(losses: Sequence[float]) -> int | None:
    return next((i for i, v in enumerate(losses) if not math.isfinite(v)), None)


def relative_progress(losses: Sequence[float], target: float | None) -> float:
    """Fraction of the way from the initial loss to the target that was covered."""
    finite = [v for v in losses if math.isfinite(v)]
    if target is None or not finite or losses[0] == target:
        return 0.0
    return (losses[0] - min(finite)) / (losses[0] - target)
