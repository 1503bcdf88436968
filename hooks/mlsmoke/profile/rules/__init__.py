"""The recommendation rules: one module each, listed in RULES.

A rule is a module with ``NAME`` and ``check(figures) -> Recommendation | None``. It
fires only on a measured figure past its threshold (a constant in the module), and its
recommendation names that figure and the line or setting to change. No rule fires on
a step with nothing to gain: the summary then says nothing. A new rule is a new
module here, added to RULES, with a test that makes it fire and one that keeps it
silent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from mlsmoke.profile.figures import Figures


@dataclass
class Recommendation:
    rule: str
    measured: str  # the figure that fired it, with its threshold
    change: str  # the line or setting to change

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def recommend(figures: Figures) -> list[Recommendation]:
    from mlsmoke.profile.rules import (
        cpu_threads,
        data_workers,
        optimizer_kernels,
        pin_memory,
        small_batch,
        sync_in_step,
        tf32_matmul,
        zero_grad,
    )

    rules = (
        data_workers,
        pin_memory,
        sync_in_step,
        optimizer_kernels,
        tf32_matmul,
        small_batch,
        zero_grad,
        cpu_threads,
    )
    found = [rule.check(figures) for rule in rules]
    return [recommendation for recommendation in found if recommendation is not None]


def percent(share: float) -> str:
    return f"{100 * share:.0f}%"
