"""A field's values stay within a range.

- float fields: the recorded min and max, each widened by the margin: the factor times
  the largest spread of the batches' minima or maxima, at least a tenth of the range;
- integer fields with a small value set (classes): exactly the recorded min..max, so
  that a label off by one is caught;
- other integer fields (token ids): min..max widened by the factor times the spread of
  the batches' extremes (at least 1), never below 0 when none was negative.

The loss's ignore index (-100) is not a value and is left out.
"""

from __future__ import annotations

import math
from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed, margin, rounded, shown, spread
from mlsmoke.expect.mechanisms import label_shift, range_change
from mlsmoke.expect.observe_limits import MAX_VALUE_SET

KIND = "value_range"
REQUIRED = ("field", "min", "max")


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        lows, highs = observed.series(name, "min"), observed.series(name, "max")
        if not observed.everywhere(name) or not lows or not highs:
            continue
        dtype = observed.series(name, "dtype")[0]
        low, high = min(lows), max(highs)
        seen = f"{shown(low)}..{shown(high)} in {len(lows)} batches"
        entry = {"kind": KIND, "field": name, "from": seen}
        if dtype.startswith("float") or dtype.startswith("bfloat"):
            width = margin([spread(lows), spread(highs)], 0.1 * (high - low), factor)
            width = width or 0.1 * abs(high) or 1e-6
            entry.update(min=rounded(low - width), max=rounded(high + width))
        elif _is_value_set(observed, name):
            entry.update(min=low, max=high, classes=True)
        else:
            width = math.ceil(margin([spread(lows), spread(highs)], 1, factor))
            entry.update(
                min=max(0, low - width) if low >= 0 else low - width, max=high + width
            )
        found.append(entry)
    return found


def _is_value_set(observed: Observed, name: str) -> bool:
    per_batch = observed.series(name, "values")
    if not per_batch:
        return False
    return len(set().union(*map(set, per_batch))) <= MAX_VALUE_SET


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, low, high = expectation["field"], expectation["min"], expectation["max"]
    for index, figures in observed.figures(name):
        if "min" not in figures:
            continue
        seen_low, seen_high = figures["min"], figures["max"]
        if seen_low >= low and seen_high <= high:
            continue
        above = seen_high > high
        sample = figures["max_at"] if above else figures["min_at"]
        if expectation.get("classes"):
            mechanism = label_shift((low, high), (seen_low, seen_high))
        else:
            mechanism = range_change(low, high, seen_low, seen_high)
        return [
            Failure(
                name,
                KIND,
                f"{shown(low)}..{shown(high)}",
                f"{shown(seen_low)}..{shown(seen_high)}",
                index,
                sample,
                mechanism,
            )
        ]
    return []
