"""A list too long for one line of a message: its first few, and how many more."""

from __future__ import annotations

from collections.abc import Sequence


def first_few(items: Sequence[str], shown: int) -> str:
    """``a, b, c, and 2 more``: the first ``shown`` items, and how many more."""
    more = f", and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more
