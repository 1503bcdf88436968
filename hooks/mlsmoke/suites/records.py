"""What an evaluation says about each example, as plain values: the only thing that
crosses from the project's interpreter to the command, and what suite files keep.

An evaluation is kept as columns, entry i of each being example i's, as the batches
gave them; an :class:`Example` is built only for the examples a caller asks about
(a flip, a label-issue hint)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class Weakest:
    """Where the label and the model disagree most, for the label-issue hint: the
    example itself for a classifier, its least confident token for a token model
    (``position``). ``label_confidence`` is the model's probability of the given label
    there (cleanlab's self-confidence), ``confidence`` that of its prediction."""

    label: int
    prediction: int
    label_confidence: float
    confidence: float
    position: int | None = None


@dataclass
class Example:
    """One evaluated example: identity (index, content hash) and outcome."""

    index: int
    hash: str
    loss: float
    score: float
    prediction: Any = None  # a class, or a list of token classes
    label: Any = None
    weakest: Weakest | None = None
    slice: str | None = None


@dataclass
class Evaluation:
    """One checkpoint evaluated on the whole dataset, one column per figure.

    ``predictions`` and ``labels`` hold None for each example when the metric gives
    none (a project ``loss`` and ``score``); so do ``label_confidence`` and
    ``confidence`` (p(label) and p(prediction) at the example's weakest point) and
    ``weakest_position`` (a token model's least confident token; None for a
    classifier). ``slices`` is empty when no slice was asked for.

    ``class_confidence`` is, per class, the mean probability the model gives that
    class on the examples (or tokens) labelled with it: confident learning's
    per-class threshold."""

    hashes: list[str] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    predictions: list[Any] = field(default_factory=list)
    labels: list[Any] = field(default_factory=list)
    label_confidence: list[float | None] = field(default_factory=list)
    confidence: list[float | None] = field(default_factory=list)
    weakest_position: list[int | None] = field(default_factory=list)
    slices: list[str | None] = field(default_factory=list)
    device: str = "cpu"
    seconds: float = 0.0
    checkpoint: str = ""
    checkpoint_sha256: str = ""
    class_confidence: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.hashes)

    def example(self, index: int) -> Example:
        """Example ``index``'s record, built from the columns."""
        return Example(
            index, self.hashes[index], self.losses[index], self.scores[index],
            self.predictions[index], self.labels[index], self.weakest(index),
            self.slices[index] if self.slices else None,
        )  # fmt: skip

    def weakest(self, index: int) -> Weakest | None:
        label_confidence = self.label_confidence[index]
        if label_confidence is None:
            return None
        label, prediction = self.labels[index], self.predictions[index]
        position = self.weakest_position[index]
        if position is not None:
            label, prediction = label[position], prediction[position]
        return Weakest(label, prediction, label_confidence, self.confidence[index],
                       position)  # fmt: skip

    def extend(self, other: Evaluation) -> None:
        """Add ``other``'s examples (the next batch) after these."""
        for name in COLUMNS:
            getattr(self, name).extend(getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        """Its fields as they are: the columns hold plain values already (asdict
        would copy every one of them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evaluation:
        return cls(**data)

    @classmethod
    def of_examples(cls, examples: list[Example], **stamp: Any) -> Evaluation:
        """The evaluation whose example i is ``examples[i]``."""
        weakest = [example.weakest for example in examples]
        return cls(
            [e.hash for e in examples], [e.loss for e in examples],
            [e.score for e in examples], [e.prediction for e in examples],
            [e.label for e in examples],
            [w.label_confidence if w else None for w in weakest],
            [w.confidence if w else None for w in weakest],
            [w.position if w else None for w in weakest],
            [e.slice for e in examples] if any(e.slice for e in examples) else [],
            **stamp,
        )  # fmt: skip


COLUMNS = ("hashes", "losses", "scores", "predictions", "labels", "label_confidence",
           "confidence", "weakest_position", "slices")  # fmt: skip


def taker(indices: list[int]) -> Callable[[Sequence[Any]], list[Any]]:
    """A function giving a column's values at ``indices``, as a list."""
    if len(indices) == 1:
        at = indices[0]
        return lambda column: [column[at]]
    getter = operator.itemgetter(*indices) if indices else lambda column: ()
    return lambda column: list(getter(column))


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
