"""A gate's verdict as plain values: what the hook prints, caches and writes as JSON.

No torch here: the hook side reads these back from the worker's JSON and the cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from mlsmoke.overfit.process.settings import DEFAULT_TIER
from mlsmoke.overfit.verdict.report import verdict_block

PASS, FAIL, ERROR = "pass", "fail", "error"

MEMORIZED = "memorized"
CONFIG_ERROR = "config-error"
TRAIN_ERROR = "train-error"
NOT_MEMORIZED = "not-memorized"


@dataclass
class Diagnosis:
    code: str
    summary: str
    evidence: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    # The run the diagnosis is about when it is a probe's, not the gate's own (a run
    # without a target that shows where the loss goes): the report draws this one.
    losses: list[float] | None = None
    steps: int | None = None
    # A pass judged after the run, against a bar the run could not stop at: the step
    # the loss first met that bar (what init calibrates max-steps with).
    memorized_in: int | None = None


@dataclass
class Warning:
    code: str
    message: str


@dataclass
class Result:
    """One gate's outcome; ``verdict`` follows from the diagnosis code."""

    gate: str
    diagnosis: Diagnosis
    warnings: list[Warning] = field(default_factory=list)
    device: str = ""
    steps: int = 0
    initial_loss: float | None = None
    final_loss: float | None = None
    target: float | None = None
    losses: list[float] = field(default_factory=list)
    # One loss curve per rank, rank 0 first, when the gate ran on ranks.
    rank_losses: list[list[float]] = field(default_factory=list)
    seconds: float = 0.0
    cached: bool = False
    tier: str = DEFAULT_TIER
    # The project files the factories imported (relative to the root): the cache
    # checks them, whatever ``watch`` says.
    sources: list[str] = field(default_factory=list)
    recipe: str = ""  # the optimizer and lr that trained, e.g. "AdamW lr 0.003 (...)"
    notes: list[str] = field(
        default_factory=list
    )  # shown with -v: where things came from

    @property
    def verdict(self) -> str:
        return verdict_of(self.diagnosis.code)

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    @property
    def steps_to_pass(self) -> int:
        """The steps it took to memorize the batch (of a pass), else the steps run."""
        reached = self.diagnosis.memorized_in
        return self.steps if reached is None else reached

    @property
    def exit_code(self) -> int:
        return {PASS: 0, FAIL: 1, ERROR: 2}[self.verdict]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {"gate": self.gate, "verdict": self.verdict, **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        """The Result in ``data``; KeyError/TypeError/ValueError when malformed."""
        fields = {k: v for k, v in data.items() if k != "verdict"}
        fields["diagnosis"] = Diagnosis(**fields["diagnosis"])
        fields["warnings"] = [Warning(**w) for w in fields.get("warnings", [])]
        fields["losses"] = [float(v) for v in fields.get("losses", [])]
        fields["rank_losses"] = [
            [float(v) for v in curve] for curve in fields.get("rank_losses", [])
        ]
        return cls(**fields)

    def report(self) -> str:
        """The human verdict block (what the CLI prints)."""
        return verdict_block(self)


def verdict_of(code: str) -> str:
    if code == MEMORIZED:
        return PASS
    if code == CONFIG_ERROR:
        return ERROR
    return FAIL
