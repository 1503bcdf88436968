"""When a training probe's answer is clear before its last step.

A probe asks whether a changed run memorizes the batch, and where its curve goes. Once
a third of its steps are taken, a curve that is flat or rising, whose recent pace
would need more than HOPELESS_FACTOR times the probe's length to reach the target, or
that has settled at a floor above the target (read every FLOOR_EVERY steps: the fit
costs more than the other checks), will not memorize within it: the steps left would
only cost time. The curve it leaves is still read the same way (its shape, its level
against the run's at the same step).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mlsmoke.overfit.verdict import curve, curve_measures

# The share of a probe's steps it always takes: a curve that starts slowly (a plateau
# at the start, a warmup) has this long to show its pace.
DECIDE_AFTER = 1 / 3
MIN_DECIDE_STEPS = 12
# A pace that needs more than this many times the probe's length will not speed up
# enough to make it: losses on one batch decelerate.
HOPELESS_FACTOR = 3
FLOOR_EVERY = 8


def hopeless_after_a_third(length: int) -> Callable[[list[float], float | None], bool]:
    """The rule for a probe of ``length`` steps (engine.train's ``stop_early``)."""

    def hopeless(losses: list[float], target: float | None) -> bool:
        return is_hopeless(losses, target, length)

    return hopeless


def is_hopeless(losses: list[float], target: float | None, length: int) -> bool:
    """Whether a probe of ``length`` steps that has left ``losses`` so far will not
    reach ``target``: past its first third, flat or rising, or far too slow."""
    taken = len(losses) - 1  # losses[0] is measured before the first update
    if target is None or taken >= length:
        return False
    if taken < max(MIN_DECIDE_STEPS, math.ceil(length * DECIDE_AFTER)):
        return False
    if not all(math.isfinite(v) for v in losses):
        return False  # the engine stops there, and says why
    needed = curve_measures.estimate_steps_to_target(losses, target)
    if needed is None or needed > HOPELESS_FACTOR * length:
        return True
    return taken % FLOOR_EVERY == 0 and _at_a_floor(losses, target)


def _at_a_floor(losses: list[float], target: float) -> bool:
    return curve.classify_curve(losses, target).shape == curve.FLOOR
