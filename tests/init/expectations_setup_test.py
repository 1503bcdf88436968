"""init wires data-expectations only once a suite is recorded, and then into the
mlsmoke repo and ``ci: skip``; turning the gate on leaves it out too, and a record that
fails leaves it off with the reason."""

from __future__ import annotations

import sys

import yaml

from mlsmoke.adopt import expectations_setup, wiring
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.candidates import Candidates
from mlsmoke.adopt.standard import standard_repos


def hooks_by_repo(text: str) -> dict[str, list[str]]:
    config = yaml.safe_load(text)
    return {r["repo"]: [h["id"] for h in r["hooks"]] for r in config["repos"]}


def gate_on(config: str) -> str:
    """A fresh adoption's config with the gate turned on: what init wires before it
    offers data-expectations."""
    repos = standard_repos()
    text = wiring.wire("", config, repos, wiring.gate_comment(Candidates()))
    return wiring.turn_gate_on(text, config, repos)


def test_the_hook_is_wired_only_when_turned_on():
    repos = standard_repos()
    text = gate_on("c.yaml")
    assert "data-expectations" not in wiring.hook_ids(text, "c.yaml")
    assert "overfit-batch" in wiring.hook_ids(text, "c.yaml")

    on = expectations_setup.turn_on(text, "c.yaml", repos)
    mlsmoke = [ids for ids in hooks_by_repo(on).values() if "doctest" in ids][0]
    assert mlsmoke[-1] == "data-expectations"
    assert yaml.safe_load(on)["ci"]["skip"][-1] == "data-expectations"
    assert expectations_setup.turn_on(on, "c.yaml", repos) == on  # idempotent


def test_a_failed_record_leaves_the_hook_off_and_says_why(
    tmp_path, monkeypatch, capsys
):
    """The loader raises: init names the failure and how to turn the hook on, and
    neither the config nor a suite is written."""
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data.py").write_text(
        "def train_loader():\n    raise FileNotFoundError('data/train.bin')\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mlsmoke.expect]\nbatch = "pkg.data:train_loader"\n'
    )
    text = gate_on(".pre-commit-config.yaml")
    (tmp_path / ".pre-commit-config.yaml").write_text(text)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)

    expectations_setup.offer(Project.load(tmp_path), standard_repos())

    err = capsys.readouterr().err
    stays_off = [line for line in err.splitlines() if "stays off" in line]
    assert stays_off == [
        "mlsmoke init: data-expectations stays off: mlsmoke expect: expect: FAIL"
        " pkg.data:train_loader (tool.mlsmoke.expect.batch) raised"
        " FileNotFoundError: data/train.bin (once"
        " `mlsmoke expect --record` succeeds, run `mlsmoke init` again)"
    ], err
    assert (tmp_path / ".pre-commit-config.yaml").read_text() == text
    assert not (tmp_path / "expectations.json").exists()


def test_a_gate_in_script_mode_without_an_expect_batch_is_not_recorded(
    tmp_path, capsys
):
    """Script mode shares no batch factory: one note says what to set, and
    ``mlsmoke expect --record`` is not run to fail on a key the user never set."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nscript = "projects/adder/adder.py"\n'
    )
    text = gate_on(".pre-commit-config.yaml")
    (tmp_path / ".pre-commit-config.yaml").write_text(text)

    expectations_setup.offer(Project.load(tmp_path), standard_repos())

    captured = capsys.readouterr()
    assert "Recording the data expectations" not in captured.out
    assert captured.err == (
        "mlsmoke init: data-expectations stays off: the gate runs a script, which"
        " gives it no batch factory; set batch in [tool.mlsmoke.expect] (a"
        ' "package.module:callable" returning the training DataLoader) and run'
        " `mlsmoke init` again\n"
    )
    assert (tmp_path / ".pre-commit-config.yaml").read_text() == text
