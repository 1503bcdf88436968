"""What ``mlsmoke profile`` profiles: --script, then [tool.mlsmoke.profile], then the
overfit gates, a script-mode gate as a script."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.errors import ConfigError, UsageError
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.profile.targets import ScriptTarget, choose, split_dashes

FACTORY = '[tool.mlsmoke.overfit]\nmodel = "m:model"\nbatch = "m:batch"\n'
SCRIPT_GATE = '[tool.mlsmoke.overfit]\nscript = "train.py"\nargs = ["--a=1"]\n'
PROFILE = '[tool.mlsmoke.profile]\nscript = "train.py"\nargs = ["--b=2"]\n'


def project(tmp_path: Path, pyproject: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(pyproject)
    (root / "train.py").write_text("")
    (tmp_path / "outside.py").write_text("")
    return root


def test_dashes_split_the_scripts_arguments_off() -> None:
    assert split_dashes(["--steps", "3"]) == (["--steps", "3"], None)
    assert split_dashes(["--script", "t.py", "--", "--x", "--"]) == (
        ["--script", "t.py"], ["--x", "--"],
    )  # fmt: skip


def test_the_script_flag_wins_over_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, PROFILE + SCRIPT_GATE)
    monkeypatch.chdir(root)
    (target,) = choose(root, "train.py", ["--c=3"], None)
    assert target == ScriptTarget("train.py", "train.py", ["--c=3"])


def test_the_profile_table_wins_over_the_gates(tmp_path: Path) -> None:
    root = project(tmp_path, PROFILE + SCRIPT_GATE)
    (target,) = choose(root, None, None, None)
    assert isinstance(target, ScriptTarget) and target.args == ["--b=2"]
    assert target.script_key == "tool.mlsmoke.profile.script"
    assert target.args_key == "tool.mlsmoke.profile.args"
    (replaced,) = choose(root, None, ["--d=4"], None)
    assert replaced.args == ["--d=4"] and replaced.args_key == "the arguments after --"


def test_a_script_mode_gate_is_profiled_as_its_script(tmp_path: Path) -> None:
    root = project(tmp_path, SCRIPT_GATE)
    (target,) = choose(root, None, None, None)
    assert target == ScriptTarget(
        "default", "train.py", ["--a=1"], "tool.mlsmoke.overfit.script",
        "tool.mlsmoke.overfit.args", globals_key="tool.mlsmoke.overfit.globals",
    )  # fmt: skip


def test_a_factory_gate_stays_a_gate(tmp_path: Path) -> None:
    (gate,) = choose(project(tmp_path, FACTORY), None, None, None)
    assert isinstance(gate, GateSettings) and gate.model == "m:model"


@pytest.mark.parametrize(
    "pyproject, script, args, gate, error, message",
    [
        (FACTORY, None, ["--x"], None, UsageError, "are a training script's"),
        (FACTORY, "train.py", None, "default", UsageError, "--gate: not with"),
        (FACTORY, "nope.py", None, None, UsageError, "--script nope.py: no such"),
        (FACTORY, "../outside.py", None, None, UsageError, "not inside the project"),
        ('[tool.mlsmoke.profile]\nscript = "x.py"\n', None, None, None, ConfigError,
         "tool.mlsmoke.profile.script: x.py does not exist"),
    ],
)  # fmt: skip
def test_bad_choices_name_the_flag_or_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyproject: str, script, args,
    gate, error: type, message: str,
) -> None:  # fmt: skip
    root = project(tmp_path, pyproject)
    monkeypatch.chdir(root)
    with pytest.raises(error, match=message.replace("(", r"\(")):
        choose(root, script, args, gate)
