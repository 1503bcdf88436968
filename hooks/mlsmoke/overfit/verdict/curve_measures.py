"""Measures of a loss curve, each a number or a yes/no read from plain floats: its
tail's level and jitter, its scale, its pace to a target, its reversals, an early
spike, the first non-finite value, whether it levels off or falls without bound."""

from __future__ import annotations

import math
from collections.abc import Sequence

# A jump of this fraction of the initial loss in one update is a spike.
SPIKE_FRACTION = 0.5
# A fall that keeps this fraction of its pace from one half of a window to the next
# is not levelling off.
STEADY_PACE = 0.75


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
