"""Model or data? A hint, never a verdict: whether a hard example's label disagrees
with a confident prediction, by confident learning (Northcutt et al., cleanlab).

Class j's threshold t_j is the mean probability the model gives j on the examples
labelled j. An example labelled i is a possible label issue when the model predicts
another class j with probability at least t_j: the model is as sure it is a j as it
is, on average, about the examples that really are. Its self-confidence (the
probability of its given label) says how much: the lower, the likelier the label is
wrong. For a token model the example's least confident token decides.

The probabilities come from the recorded evaluation, on the evaluation set: they are
out-of-sample when the model was not trained on it, as confident learning requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsmoke.suites.records import Evaluation, Example


@dataclass
class LabelIssue:
    index: int
    label: int
    prediction: int
    self_confidence: float  # p(given label)
    confidence: float  # p(predicted class)
    threshold: float  # the predicted class's t_j
    position: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "label": self.label,
            "prediction": self.prediction,
            "self_confidence": self.self_confidence,
            "confidence": self.confidence,
            "threshold": self.threshold,
            "position": self.position,
        }

    def describe(self) -> str:
        where = f" token {self.position}" if self.position is not None else ""
        return (
            f"#{self.index}{where}: labelled {self.label}, predicted"
            f" {self.prediction} with p={self.confidence:.2f} (class threshold"
            f" {self.threshold:.2f}); p(label)={self.self_confidence:.3f}"
        )


def possible_label_issue(
    example: Example, class_confidence: dict[str, float]
) -> LabelIssue | None:
    """The hint for one example; None when its label agrees with the model, or when
    the metric gives no probabilities (a project ``loss``/``score``)."""
    weakest = example.weakest
    if weakest is None or weakest.prediction == weakest.label:
        return None
    threshold = class_confidence.get(str(weakest.prediction))
    if threshold is None or weakest.confidence < threshold:
        return None
    return LabelIssue(
        example.index,
        weakest.label,
        weakest.prediction,
        weakest.label_confidence,
        weakest.confidence,
        threshold,
        weakest.position,
    )


def issues_among(evaluation: Evaluation, indices: list[int]) -> list[LabelIssue]:
    """The possible label issues among ``indices``, least self-confident first."""
    found = [
        possible_label_issue(evaluation.example(index), evaluation.class_confidence)
        for index in indices
        if index < len(evaluation)
    ]
    issues = [issue for issue in found if issue is not None]
    return sorted(issues, key=lambda issue: (issue.self_confidence, issue.index))
