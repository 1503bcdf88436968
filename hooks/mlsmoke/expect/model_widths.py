"""The model's widths that the recorded fields met (``model_probe``), for the kinds
that keep a field below or equal to one: ``class_ids``, ``token_ids`` and
``target_width``. Pure: plain figures in, expectations and failures out.

An expectation is kept only for a field that met the width in the probe and stayed
within it in every recorded batch. At check the width is the model's as probed then;
without a probe (no model configured, the pytest API called without one, or a forward
that raised before reaching the call) it is the recorded one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed


def met(observed: Observed, role: str) -> dict[str, tuple[int, str]]:
    """field -> (the smallest width it met in ``role``, the call that showed it)."""
    found: dict[str, tuple[int, str]] = {}
    for meeting in (observed.model or {}).get("meetings", []):
        if meeting["role"] != role:
            continue
        known = found.get(meeting["field"])
        if known is None or meeting["width"] < known[0]:
            found[meeting["field"]] = (meeting["width"], meeting["call"])
    return found


def width_now(observed: Observed, role: str, name: str, recorded: int) -> int:
    return met(observed, role).get(name, (recorded, ""))[0]


def infer_below(
    observed: Observed, role: str, kind: str, key: str
) -> list[dict[str, Any]]:
    """``{kind, field, key: width}`` for each integer field whose largest value stayed
    below the width it met, in every recorded batch."""
    found = []
    for name, (width, call) in met(observed, role).items():
        highs = observed.series(name, "max")
        if not observed.everywhere(name) or not highs or max(highs) >= width:
            continue
        seen = f"max {max(highs)} in {len(highs)} batches; {width} wide at {call}"
        found.append({"kind": kind, "field": name, key: width, "from": seen})
    return found


def check_below(
    expectation: dict[str, Any],
    observed: Observed,
    role: str,
    key: str,
    mechanism: Callable[[int, int, int, int], str],
) -> list[Failure]:
    """The first batch whose field reaches the width; ``mechanism(width, recorded,
    low, high)`` names why."""
    name, recorded = expectation["field"], expectation[key]
    width = width_now(observed, role, name, recorded)
    for index, figures in observed.figures(name):
        high = figures.get("max")
        if high is None or high < width:
            continue
        low = figures.get("min", high)
        return [
            Failure(
                name,
                expectation["kind"],
                f"below {width} ({key}: the model's, recorded {recorded})",
                f"max {high}",
                index,
                figures.get("max_at"),
                mechanism(width, recorded, low, high),
            )
        ]
    return []
