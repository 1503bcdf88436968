"""The suites on a token model, checked through the pytest API
(``mlsmoke.suites.check``) in this process after a record by the command."""

from __future__ import annotations

from pathlib import Path

import pytest

import mlsmoke.suites
import suites_project
from suites_cli import Project, make_project, run_suites


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = make_project(tmp_path_factory.mktemp("tokens") / "tokens", "tokens",
                           size=400, hard=20)  # fmt: skip
    project.train(200)
    ran = run_suites(project.root, "record")
    assert ran.code == 0, ran.stderr
    return project


@pytest.fixture
def in_project(tokens: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(tokens.root)
    return tokens


def test_token_suites_are_recorded_per_topic(tokens: Project) -> None:
    names = sorted(path.stem for path in (tokens.root / "suites").glob("*.json"))
    topics = [f"slice-topic-{token}" for token in range(suites_project.VOCAB)]
    assert names == ["hard", *topics, "whole-set", "wrong"]
    example = tokens.suite("hard")["examples"][0]
    assert len(example["label"]) == len(example["prediction"]) == suites_project.LENGTH


def test_trained_further_holds(in_project: Project, tmp_path: Path) -> None:
    further = in_project.train(50, tmp_path / "further.pt", in_project.checkpoint, 1)
    checked = mlsmoke.suites.check(further)
    assert checked.passed, checked.report()


def test_zeroed_head_row_fails_its_topic_as_less_sure(
    in_project: Project, tmp_path: Path
) -> None:
    """The row alone: every other logit is negative where class 3 is right, so its
    logit of 0 still wins and no prediction flips; p(label) falls from ~1 to ~0.5
    there, and the topic's suite fails on the loss of the examples it got right."""
    broken = suites_project.without_class(in_project.checkpoint, 3, tmp_path / "b.pt")
    checked = mlsmoke.suites.check(broken)
    assert not checked.passed
    outcomes = {suite.name: suite for suite in checked.comparison.suites}
    topic = outcomes["slice-topic-3"]
    assert topic.loss_regressed and not topic.score_regressed and not topic.flips
    assert topic.loss_rise > 2 * topic.loss_tolerance
    assert not checked.comparison.whole_set.regressed
    others = [name for name, s in outcomes.items() if s.regressed]
    assert sorted(others) == ["hard", "slice-topic-3"]
    assert len(topic.less_sure) == topic.right == topic.size
    assert all(flip.label.count(3) == max(map(flip.label.count, flip.label))
               for flip in topic.less_sure)  # fmt: skip
    report = checked.report()
    assert "slice-topic-3" in report and "REGRESSED (less sure)" in report
    shown = topic.less_sure[0]
    assert f"{shown.index:>7}  [" in report


def test_never_predicted_token_class_flips_its_topic(
    in_project: Project, tmp_path: Path
) -> None:
    broken = suites_project.without_class(
        in_project.checkpoint, 3, tmp_path / "b.pt", bias=-20.0
    )
    checked = mlsmoke.suites.check(broken)
    assert not checked.passed
    outcomes = {suite.name: suite for suite in checked.comparison.suites}
    assert outcomes["slice-topic-3"].score_regressed
    assert not outcomes["slice-topic-3"].global_shift
    assert outcomes["slice-topic-3"].flips
    flip = outcomes["slice-topic-3"].flips[0]
    assert flip.label.count(3) > suites_project.LENGTH // 2
    assert "slice-topic-3: " in checked.report() and "flipped" in checked.report()
