"""The check's decision, on plain values: each suite's mean score now against its
baseline, with its tolerance; the examples that flipped from right to wrong; and the
same comparison on the whole set, so that a suite that only follows a global shift
is named as such."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from mlsmoke.suites.records import Evaluation, mean
from mlsmoke.suites.settings import SuitesSettings
from mlsmoke.suites.suite_file import WHOLE_SET, SuiteFile


@dataclass
class Flip:
    """An example right at record time and wrong now."""

    index: int
    label: Any
    old_prediction: Any
    new_prediction: Any
    old_loss: float
    new_loss: float


@dataclass
class SuiteOutcome:
    name: str
    kind: str
    size: int
    baseline: float  # mean score at record time
    now: float
    tolerance: float
    loss_before: float
    loss_now: float
    flips: list[Flip] = field(default_factory=list)
    fixed: int = 0  # wrong at record time, right now
    global_shift: bool = False  # fails, and the whole set fell as much

    @property
    def drop(self) -> float:
        return self.baseline - self.now

    @property
    def regressed(self) -> bool:
        # a hair of slack: 6-digit rounding in the file must not fail a suite
        return self.drop > self.tolerance + 1e-6

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(drop=self.drop, regressed=self.regressed)
        return data


@dataclass
class Comparison:
    whole_set: SuiteOutcome
    suites: list[SuiteOutcome]

    @property
    def passed(self) -> bool:
        return not self.whole_set.regressed and not any(
            s.regressed for s in self.suites
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "whole_set": self.whole_set.to_json(),
            "suites": [suite.to_json() for suite in self.suites],
        }


def compare_all(
    suites: list[SuiteFile], evaluation: Evaluation, settings: SuitesSettings
) -> Comparison:
    """Every recorded suite and the whole set against ``evaluation``."""
    whole = next(s for s in suites if s.name == WHOLE_SET)
    whole_outcome = SuiteOutcome(
        WHOLE_SET, WHOLE_SET, len(evaluation), float(whole.metric["score"]),
        mean(evaluation.scores), settings.tolerance_of(WHOLE_SET),
        float(whole.metric["loss"]), mean(evaluation.losses),
    )  # fmt: skip
    outcomes = [
        compare(suite, evaluation, settings.tolerance_of(suite.name), settings.right_at)
        for suite in suites
        if suite.name != WHOLE_SET
    ]
    if whole_outcome.regressed:
        for outcome in outcomes:
            shift = whole_outcome.drop + outcome.tolerance
            outcome.global_shift = outcome.regressed and outcome.drop <= shift + 1e-6
    return Comparison(whole_outcome, outcomes)


def compare(
    suite: SuiteFile, evaluation: Evaluation, tolerance: float, right_at: float
) -> SuiteOutcome:
    """One suite: its examples' scores now against their recorded ones."""
    indices = [old["index"] for old in suite.examples]
    scores = [evaluation.scores[index] for index in indices]
    losses = [evaluation.losses[index] for index in indices]
    flips, fixed = [], 0
    for old, score, loss in zip(suite.examples, scores, losses):
        was_right = float(old["score"]) >= right_at
        is_right = score >= right_at
        if was_right and not is_right:
            new_prediction = evaluation.predictions[old["index"]]
            flips.append(
                Flip(old["index"], old["label"], old["prediction"], new_prediction,
                     float(old["loss"]), loss)
            )  # fmt: skip
        fixed += int(is_right and not was_right)
    flips.sort(key=lambda flip: (-flip.new_loss, flip.index))
    return SuiteOutcome(
        suite.name, suite.kind, len(suite.examples), float(suite.metric["score"]),
        mean(scores), tolerance, float(suite.metric["loss"]), mean(losses),
        flips, fixed,
    )  # fmt: skip
