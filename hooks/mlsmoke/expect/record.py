"""Infer a suite from observed batches: every kind's expectations, sorted by field."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds import KINDS
from mlsmoke.expect.kinds.base import Observed
from mlsmoke.expect.suite_file import identity, with_digest

# How much wider than the recorded spread every margin is: the field guide asks for
# ranges as wide as possible, since a false alarm teaches users to skip the hook.
FACTOR = 2.0


def infer(observed: Observed, factor: float = FACTOR) -> list[dict[str, Any]]:
    found = []
    for module in KINDS.values():
        found += [with_digest(entry) for entry in module.infer(observed, factor)]
    return sorted(found, key=identity)
