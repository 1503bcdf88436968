"""A field's shape pattern: the batch dimension symbolic (``"B"``), a dimension that
was the same in every recorded batch exact, one that varied a range: the recorded
lengths, widened by the factor (``[min / factor, max * factor]``)."""

from __future__ import annotations

import math
from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.mechanisms import label_width_change, shape_change

KIND = "shape"
REQUIRED = ("field", "shape")
BATCH_DIM = "B"


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        shapes = observed.series(name, "shape")
        if not shapes or len({len(s) for s in shapes}) != 1 or not shapes[0]:
            continue
        pattern: list[Any] = [BATCH_DIM]
        for lengths in list(zip(*shapes))[1:]:
            if len(set(lengths)) == 1:
                pattern.append(lengths[0])
            else:
                low = max(1, math.floor(min(lengths) / factor))
                pattern.append([low, math.ceil(max(lengths) * factor)])
        seen = sorted({" x ".join(map(str, ["B", *s[1:]])) for s in shapes})
        found.append(
            {
                "kind": KIND,
                "field": name,
                "shape": pattern,
                "from": f"{', '.join(seen)} in {len(shapes)} batches",
            }
        )
    return found


def matches(pattern: list[Any], shape: list[int]) -> bool:
    if len(pattern) != len(shape):
        return False
    for want, length in zip(pattern[1:], shape[1:]):
        if isinstance(want, list) and not want[0] <= length <= want[1]:
            return False
        if isinstance(want, int) and want != length:
            return False
    return True


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, pattern = expectation["field"], expectation["shape"]
    for index, figures in observed.figures(name):
        shape = figures["shape"]
        if not matches(pattern, shape):
            return [
                Failure(
                    name,
                    KIND,
                    _pattern_text(pattern),
                    _shape_text(shape),
                    index,
                    mechanism=_mechanism(pattern, shape, figures),
                )
            ]
    return []


def _mechanism(
    pattern: list[Any], shape: list[int], figures: dict[str, Any]
) -> str | None:
    """A label field's width is its number of classes, not a sequence length."""
    label = figures.get("label")
    if label is not None and len(pattern) == 2 and isinstance(pattern[1], int):
        return label_width_change(pattern[1], shape[1], label["classes"])
    return shape_change(pattern, shape)


def _pattern_text(pattern: list[Any]) -> str:
    parts = [f"{d[0]}..{d[1]}" if isinstance(d, list) else str(d) for d in pattern]
    return "(" + ", ".join(parts) + ")"


def _shape_text(shape: list[int]) -> str:
    return "(" + ", ".join(["B", *map(str, shape[1:])]) + ")" if shape else "()"
