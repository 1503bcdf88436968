"""What an evaluation says about each example, as plain values: the only thing that
crosses from the project's interpreter to the command, and what suite files keep."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Example:
        weakest = data.get("weakest")
        values = {**data, "weakest": Weakest(**weakest) if weakest else None}
        return cls(**values)


@dataclass
class Evaluation:
    """One checkpoint evaluated on the whole dataset.

    ``class_confidence`` is, per class, the mean probability the model gives that
    class on the examples (or tokens) labelled with it: confident learning's
    per-class threshold."""

    examples: list[Example]
    device: str = "cpu"
    seconds: float = 0.0
    checkpoint: str = ""
    checkpoint_sha256: str = ""
    class_confidence: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evaluation:
        examples = [Example.from_json(item) for item in data["examples"]]
        return cls(**{**data, "examples": examples})

    def by_index(self) -> dict[int, Example]:
        return {example.index: example for example in self.examples}


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
