"""The check's decision, on plain values: each suite's mean score now against its
baseline, with its tolerance; the examples that flipped from right to wrong; and the
same comparison on the whole set, so that a suite that only follows a global shift
is named as such.

A suite also fails when the examples it got right are much less sure of their label
now: their mean loss rose by more than ``loss-tolerance`` (nats for the default
cross-entropy). Predictions can all hold while that happens (a class's head row
zeroed in a model whose other logits are negative: a logit of 0 still wins, with
far less probability), and the probabilities are what a sampler, a threshold or a
calibrated consumer uses. Only the examples right at record time count: a wrong
one's loss drifts as a model grows more or less confident, and its score already
says whether it got fixed."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from itertools import compress
from typing import Any

from mlsmoke.suites.records import Evaluation, mean, taker
from mlsmoke.suites.settings import SuitesSettings
from mlsmoke.suites.suite_file import WHOLE_SET, SuiteFile


@dataclass
class Flip:
    """An example right at record time and wrong now (a flip), or right still with
    its loss risen beyond the loss tolerance (less sure)."""

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
    loss_tolerance: float | None = None  # None: the loss is not compared
    right: int = 0  # examples right at record time
    right_loss_before: float = 0.0  # their mean loss then
    right_loss_now: float = 0.0
    less_sure: list[Flip] = field(default_factory=list)  # right still, loss risen

    @property
    def drop(self) -> float:
        return self.baseline - self.now

    @property
    def loss_rise(self) -> float:
        return self.right_loss_now - self.right_loss_before

    @property
    def score_regressed(self) -> bool:
        # a hair of slack: 6-digit rounding in the file must not fail a suite
        return self.drop > self.tolerance + 1e-6

    @property
    def loss_regressed(self) -> bool:
        if self.loss_tolerance is None or not self.right:
            return False
        if math.isnan(self.right_loss_before):
            return False
        return not self.loss_rise <= self.loss_tolerance + 1e-6  # NaN now fails

    @property
    def regressed(self) -> bool:
        return self.score_regressed or self.loss_regressed

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(
            drop=self.drop,
            regressed=self.regressed,
            loss_rise=self.loss_rise,
            loss_regressed=self.loss_regressed,
        )
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
        compare(suite, evaluation, settings.tolerance_of(suite.name), settings.right_at,
                settings.loss_tolerance)  # fmt: skip
        for suite in suites
        if suite.name != WHOLE_SET
    ]
    if whole_outcome.regressed:
        for outcome in outcomes:
            shift = whole_outcome.drop + outcome.tolerance
            outcome.global_shift = (
                outcome.score_regressed and outcome.drop <= shift + 1e-6
            )
    return Comparison(whole_outcome, outcomes)


def compare(
    suite: SuiteFile,
    evaluation: Evaluation,
    tolerance: float,
    right_at: float,
    loss_tolerance: float | None = None,
) -> SuiteOutcome:
    """One suite: its examples' scores now against their recorded ones, and the
    loss of those it got right (a column at a time)."""
    indices, recorded = suite.indices, suite.columns
    taken = taker(indices)
    scores, losses = taken(evaluation.scores), taken(evaluation.losses)
    old_losses = list(map(float, recorded["loss"]))
    was_right = [score >= right_at for score in map(float, recorded["score"])]
    is_right = [score >= right_at for score in scores]
    fixed = sum(map(operator.gt, is_right, was_right))
    right_before = list(compress(old_losses, was_right))
    right_now = list(compress(losses, was_right))
    # was right, and now wrong or (with a loss tolerance) less sure beyond it
    changed: Iterable[bool] = map(operator.not_, is_right)
    if loss_tolerance is not None:
        rises = map(operator.sub, losses, old_losses)
        changed = map(operator.or_, changed, map(float(loss_tolerance).__lt__, rises))
    flips, less_sure = [], []
    for at in compress(range(len(indices)), map(operator.and_, was_right, changed)):
        change = Flip(indices[at], recorded["label"][at], recorded["prediction"][at],
                      evaluation.predictions[indices[at]], old_losses[at],
                      losses[at])  # fmt: skip
        (less_sure if is_right[at] else flips).append(change)
    flips.sort(key=lambda flip: (-flip.new_loss, flip.index))
    less_sure.sort(key=lambda flip: (flip.old_loss - flip.new_loss, flip.index))
    return SuiteOutcome(
        suite.name, suite.kind, len(indices), float(suite.metric["score"]),
        mean(scores), tolerance, float(suite.metric["loss"]), mean(losses),
        flips, fixed, loss_tolerance=loss_tolerance, right=len(right_before),
        right_loss_before=mean(right_before), right_loss_now=mean(right_now),
        less_sure=less_sure,
    )  # fmt: skip
