"""What every expectation kind shares: the observed batches it reads, the failure it
reports, and the margin rule.

A kind is a module of ``kinds/`` with ``KIND`` (its name in the suite), ``REQUIRED``
(the keys an expectation of it must have), ``infer(observed, factor)`` returning its
expectations (plain dicts, each with ``kind``, ``field`` and ``from``: the figure it
was inferred from) and ``check(expectation, observed)`` returning Failures.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

BATCH = "(batch)"  # the "field" of expectations about whole samples


@dataclass
class Observed:
    """The figures of the batches read (``observe.observe_batch``), training and
    validation, and the model's widths where the fields met them
    (``model_probe.probe_model``; None when no model was probed)."""

    batches: list[dict[str, Any]]
    validation: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, Any] | None = None

    def field_names(self) -> list[str]:
        names: dict[str, None] = {}
        for batch in self.batches:
            names.update(dict.fromkeys(batch["fields"]))
        return list(names)

    def everywhere(self, name: str) -> bool:
        """Whether ``name`` is a field of every batch."""
        return bool(self.batches) and all(name in b["fields"] for b in self.batches)

    def figures(self, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """(batch index, figures) of ``name`` in each batch that has it."""
        for index, batch in enumerate(self.batches):
            if name in batch["fields"]:
                yield index, batch["fields"][name]

    def is_label_field(self, name: str) -> bool:
        """Whether ``name`` held one column per class in a batch (``labels.py``):
        its columns' figures are class frequencies, not features."""
        return any("label" in figures for _, figures in self.figures(name))

    def series(self, name: str, key: str) -> list[Any]:
        """``key``'s figure of ``name`` in every batch; [] when one lacks it."""
        values = [figures.get(key) for _, figures in self.figures(name)]
        return [] if not values or None in values else values

    def relation(self, kind: str, fields: Sequence[str]) -> list[bool | None]:
        """Per batch, whether the relation held (None: no evidence, or not there)."""
        held = []
        for batch in self.batches:
            found = [
                r
                for r in batch["relations"]
                if r["kind"] == kind and r["fields"] == list(fields)
            ]
            held.append(found[0]["holds"] if found else None)
        return held


@dataclass
class Failure:
    """One expectation that did not hold, with where and, when the evidence says,
    the likely mechanism."""

    field: str
    kind: str
    expected: str
    observed: str
    batch: int | None = None
    sample: int | None = None
    mechanism: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def spread(values: Sequence[float]) -> float:
    return max(values) - min(values) if values else 0.0


def margin(spreads: Sequence[float], floor: float, factor: float) -> float:
    """The widening of a band: the largest spread between the recorded batches, at
    least ``floor``, times the suite's factor."""
    return factor * max([*spreads, floor])


def elements(shape: Sequence[int], per_channel: bool = False) -> int:
    """How many values a figure of a field of ``shape`` was computed from."""
    count = math.prod(shape)
    return count // shape[1] if per_channel and len(shape) > 1 and shape[1] else count


def smaller_sample(recorded: int, observed: int) -> float:
    """How much wider a band is read for a smaller batch than the recorded ones: a
    mean or share of n values wanders as 1/sqrt(n)."""
    if observed <= 0 or observed >= recorded:
        return 1.0
    return math.sqrt(recorded / observed)


def rounded(value: float) -> float:
    """A bound as a reviewer reads it: 4 significant digits."""
    if value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.4g}")


def shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
