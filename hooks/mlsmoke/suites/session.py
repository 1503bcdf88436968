"""Record and check, given an evaluation: shared by the command, which evaluates in
the project's interpreter, and the pytest API, which evaluates in its own process."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.suites import identity, report
from mlsmoke.suites.comparison import Comparison, compare_all
from mlsmoke.suites.example_lines import LABEL_ISSUE, Lines, column_lines
from mlsmoke.suites.kinds import Selected, select_all
from mlsmoke.suites.label_issues import LabelIssue, issues_among
from mlsmoke.suites.records import COLUMNS, Evaluation, mean, taker
from mlsmoke.suites.settings import SuitesSettings
from mlsmoke.suites.suite_file import WHOLE_SET, SuiteFile, stale_files, write_all


@dataclass
class Recorded:
    evaluation: Evaluation
    suites: list[SuiteFile]
    label_issues: list[LabelIssue]
    removed: list[Path] = field(default_factory=list)

    def lines(self, directory: Path) -> list[str]:
        lines = [
            f"suites recorded in {directory}: {report.evaluated_line(self.evaluation)}"
        ]
        rows = [
            (s.name, s.recorded.get("size", len(s)), s.metric["score"],
             s.metric["loss"])
            for s in self.suites
        ]  # fmt: skip
        lines += report.record_table(rows)
        hard = next((s for s in self.suites if s.name == "hard"), None)
        if hard is not None:
            lines += report.label_issue_lines(self.label_issues, len(hard))
        lines += [f"  removed {path}: no longer a suite" for path in self.removed]
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluation": {k: v for k, v in self.evaluation.to_json().items()
                           if k not in COLUMNS},
            "suites": [s.to_json() for s in self.suites],
            "label_issues": [issue.to_json() for issue in self.label_issues],
        }  # fmt: skip


@dataclass
class Checked:
    evaluation: Evaluation
    comparison: Comparison

    @property
    def passed(self) -> bool:
        return self.comparison.passed

    def lines(self) -> list[str]:
        verdict = "held" if self.passed else "FAILED"
        head = f"suites check {verdict}: {report.evaluated_line(self.evaluation)}"
        return [head, *report.check_lines(self.comparison)]

    def report(self) -> str:
        return "\n".join(self.lines())

    def to_json(self) -> dict[str, Any]:
        return {**self.comparison.to_json(), "checkpoint": self.evaluation.checkpoint,
                "seconds": self.evaluation.seconds}  # fmt: skip


def record(
    settings: SuitesSettings, evaluation: Evaluation, directory: Path
) -> Recorded:
    """Write every suite's file (and remove those a new record no longer makes)."""
    chosen = select_all(evaluation, settings)
    hard = next((s for s in chosen if s.name == "hard"), None)
    issues = issues_among(evaluation, hard.indices) if hard else []
    flagged = {issue.index: issue for issue in issues}
    stamp = _stamp(settings, evaluation)
    files = [_whole_set(evaluation, stamp)]
    files += [_suite_file(s, evaluation, stamp, flagged) for s in chosen]
    removed = stale_files(directory, {f.name for f in files})
    write_all(directory, files, _lines(evaluation, chosen))
    for path in removed:
        os.unlink(path)
    return Recorded(evaluation, files, issues, removed)


def check(
    settings: SuitesSettings, suites: list[SuiteFile], evaluation: Evaluation
) -> Checked:
    """Compare; identity.DatasetChanged when the suites no longer refer to the same
    examples. Never writes a suite file."""
    identity.verify(suites, evaluation)
    return Checked(evaluation, compare_all(suites, evaluation, settings))


def for_check(settings: SuitesSettings) -> SuitesSettings:
    """The settings a check evaluates with: slice names only choose the suites a
    record writes, so a check does not ask the project's slice function."""
    return dataclasses.replace(settings, slice=None)


def _stamp(settings: SuitesSettings, evaluation: Evaluation) -> dict[str, Any]:
    return {
        "checkpoint": evaluation.checkpoint,
        "checkpoint_sha256": evaluation.checkpoint_sha256,
        "right_at": settings.right_at,
    }


def _whole_set(evaluation: Evaluation, stamp: dict[str, Any]) -> SuiteFile:
    recorded = {
        **stamp,
        "size": len(evaluation),
        "fingerprint": identity.fingerprint(evaluation.hashes),
    }
    return SuiteFile(WHOLE_SET, WHOLE_SET, "every example of the dataset",
                     _metric(evaluation.scores, evaluation.losses),
                     recorded=recorded)  # fmt: skip


def _suite_file(
    selected: Selected,
    evaluation: Evaluation,
    stamp: dict[str, Any],
    flagged: dict[int, LabelIssue],
) -> SuiteFile:
    indices = sorted(selected.indices)
    e = evaluation
    columns = {"index": indices}
    taken = taker(indices)
    for name, column in (("hash", e.hashes), ("label", e.labels),
                         ("prediction", e.predictions), ("loss", e.losses),
                         ("score", e.scores)):  # fmt: skip
        columns[name] = taken(column)
    if selected.kind == "hard":  # the hint's column, null where there is none
        columns[LABEL_ISSUE] = [
            flagged[i].to_json() if i in flagged else None for i in indices
        ]
    metric = _metric(columns["score"], columns["loss"])
    return SuiteFile(selected.name, selected.kind, selected.note, metric, columns,
                     {**stamp, "size": len(indices)})  # fmt: skip


def _lines(evaluation: Evaluation, chosen: list[Selected]) -> Lines:
    """The suites' example lines, each made once from the columns."""
    indices: set[int] = set()
    for selected in chosen:
        indices.update(selected.indices)
    e = evaluation
    every = range(len(e))  # the indices are the evaluation's: all of them, or fewer
    chosen_indices = every if len(indices) == len(every) else sorted(indices)
    return column_lines(chosen_indices, e.hashes, e.labels, e.predictions, e.losses,
                        e.scores)  # fmt: skip


def _metric(scores: list[float], losses: list[float]) -> dict[str, float]:
    return {"score": mean(scores), "loss": mean(losses)}
