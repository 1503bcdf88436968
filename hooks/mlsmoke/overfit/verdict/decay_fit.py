"""An exponential decay to a floor, fitted by least squares on the second half of a
loss curve: where a falling curve levels off, and the step at which it reaches a
target. Pure functions of plain floats."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


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
