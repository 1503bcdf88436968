"""The shape every benchmark returns, and its Markdown rendering.

Each ``benchmarks/bench_<name>.py`` exposes ``run(quick: bool) -> Section``.
Ratios are the figures; absolute times are context only, since the machines are noisy.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field


@dataclass
class Section:
    title: str
    columns: list[str]
    rows: list[list[object]]
    notes: list[str] = field(default_factory=list)

    def to_markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + " --- |" * len(self.columns))
        lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in self.rows]
        lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def to_json(self) -> dict:
        return asdict(self)


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    """The median wall time of ``repeats`` calls of ``action``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
