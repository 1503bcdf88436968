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
    # further tables under this one's heading (a catalog's confusion matrices)
    tables: list[Section] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict) -> Section:
        tables = [cls.from_json(table) for table in data.get("tables", [])]
        return cls(**{**data, "tables": tables})

    def to_markdown(self, level: int = 3) -> str:
        lines = [f"{'#' * level} {self.title}", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + " --- |" * len(self.columns))
        lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in self.rows]
        lines += [""] + [f"- {note}" for note in self.notes]
        text = "\n".join(lines).rstrip() + "\n"
        return "\n".join([text, *(t.to_markdown(level + 1) for t in self.tables)])

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
