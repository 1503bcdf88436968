"""Bad input to ``mlsmoke suites``: one clear message naming the suite, the key or the
option, exit code 2 (docs/exit-codes.md), no traceback of mlsmoke's own, and no
suite file rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from suites_cli import Project, make_project, run_suites


def assert_bad_input(ran, *phrases: str) -> None:
    assert ran.code == 2, ran.stdout + ran.stderr
    for phrase in phrases:
        assert phrase in ran.stderr, ran.stderr
    # the project's own traceback may be shown; never a frame of mlsmoke's
    frames = [line for line in ran.stderr.splitlines() if line.strip().startswith(
        "File ")]  # fmt: skip
    assert [line for line in frames if "/mlsmoke/" in line] == []
    assert ran.stdout == ""


def test_checkpoint_that_does_not_fit_the_model(recorded: Project, tmp_path: Path):
    state = torch.load(recorded.checkpoint, weights_only=True)["model"]
    state["head.extra"] = torch.zeros(3)
    state["body.0.weight"] = torch.zeros(32, 9)
    del state["head.bias"]
    torch.save(state, tmp_path / "other.pt")
    ran = run_suites(recorded.root, "check", "--checkpoint", str(tmp_path / "other.pt"))
    assert_bad_input(
        ran,
        f"--checkpoint {tmp_path / 'other.pt'}",
        "does not fit the model (Classifier)",
        "missing keys (1): head.bias",
        "unexpected keys (1): head.extra",
        "body.0.weight (32, 9) in the checkpoint, (32, 8) in the model",
    )


def test_checkpoint_that_is_not_a_state_dict(recorded: Project, tmp_path: Path):
    torch.save({"steps": torch.tensor(3), "note": "no weights"}, tmp_path / "odd.pt")
    ran = run_suites(recorded.root, "check", "--checkpoint", str(tmp_path / "odd.pt"))
    assert_bad_input(ran, "not a state dict", "['note', 'steps']")


def test_suite_file_from_another_version(recorded_copy: Project) -> None:
    path = recorded_copy.root / "suites" / "hard.json"
    data = json.loads(path.read_text())  # as version 1 wrote it: keyed examples
    names = data.pop("columns")
    data.update(version=1, examples=[dict(zip(names, row)) for row in data["examples"]])
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    ran = run_suites(recorded_copy.root, "check")
    assert_bad_input(
        ran,
        "hard.json: suite 'hard', key \"version\": version 1",
        "reads version 2",
        "record the suites again (mlsmoke suites record)",
    )
    assert path.read_bytes() == before


def test_metric_callable_that_raises(recorded_copy: Project) -> None:
    pyproject = recorded_copy.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'score = "suites_project:score"\n')
    ran = run_suites(recorded_copy.root, "check", SCORE_RAISES="1")
    assert_bad_input(
        ran,
        "tool.mlsmoke.suites.score: raised ValueError: score needs a threshold",
        "suites_project.py",
    )


def test_check_before_any_record(tmp_path: Path) -> None:
    project = make_project(tmp_path / "fresh")
    ran = run_suites(project.root, "check")
    assert_bad_input(ran, "no recorded suites; run mlsmoke suites record first")


def test_model_that_does_not_import(recorded_copy: Project) -> None:
    pyproject = recorded_copy.root / "pyproject.toml"
    text = pyproject.read_text().replace("suites_project:classifier", "nowhere:model")
    pyproject.write_text(text)
    ran = run_suites(recorded_copy.root, "record")
    assert_bad_input(ran, "tool.mlsmoke.suites.model: cannot import 'nowhere'")
