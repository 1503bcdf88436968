from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mlsmoke
from mlsmoke import interpreter, project_command
from mlsmoke.errors import ConfigError, EnvironmentProblem

BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


def fake_env(root: Path, name: str, torch_version: str | None) -> Path:
    """A directory ``name/bin/python`` whose interpreter imports torch or not."""
    site = root / name / "site"
    site.mkdir(parents=True)
    if torch_version is not None:
        (site / "torch").mkdir()
        (site / "torch" / "__init__.py").write_text("")
        dist_info = site / f"torch-{torch_version}.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: torch\nVersion: {torch_version}\n"
        )
    python = root / name / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{BASE_PYTHON}" -S "$@"\n')
    python.chmod(0o755)
    return python


def test_explicit_configuration_wins_and_is_not_second_guessed(tmp_path: Path) -> None:
    without = fake_env(tmp_path, "without", None)
    with_torch = fake_env(tmp_path, "with", "2.13.0")
    environ = {"PATH": str(with_torch.parent)}
    with pytest.raises(EnvironmentProblem, match="cannot import torch"):
        interpreter.find_project_interpreter(
            tmp_path, ["torch"], (str(without), "tool.mlsmoke.python"), environ
        )


def test_configured_relative_path_is_taken_from_the_project_root(
    tmp_path: Path,
) -> None:
    fake_env(tmp_path, "env", "2.13.0")
    found = interpreter.find_project_interpreter(
        tmp_path, ["torch"], ("env/bin/python", "tool.mlsmoke.python"), {"PATH": ""}
    )
    assert found.path == tmp_path / "env" / "bin" / "python"
    assert found.origin == "tool.mlsmoke.python"
    assert found.modules == {"torch": "2.13.0"}


def test_missing_configured_interpreter_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="^tool.mlsmoke.doctest.python: 'nope/py'"):
        interpreter.find_project_interpreter(
            tmp_path, [], ("nope/py", "tool.mlsmoke.doctest.python"), {}
        )


def test_environment_variable_comes_before_path(tmp_path: Path) -> None:
    on_path = fake_env(tmp_path, "path", "2.13.0")
    chosen = fake_env(tmp_path, "chosen", "2.13.0")
    environ = {"PATH": str(on_path.parent), "MLSMOKE_PYTHON": str(chosen)}
    found = interpreter.find_project_interpreter(tmp_path, ["torch"], None, environ)
    assert (found.path, found.origin) == (chosen, "MLSMOKE_PYTHON")


def test_path_is_searched_in_order_for_an_interpreter_with_torch(
    tmp_path: Path,
) -> None:
    first = fake_env(tmp_path, "first", None)
    second = fake_env(tmp_path, "second", "1.0")
    environ = {"PATH": f"{first.parent}:{second.parent}"}
    found = interpreter.find_project_interpreter(tmp_path, ["torch"], None, environ)
    assert found.path == second
    assert found.origin == "PATH"


def test_the_hooks_own_environment_is_skipped_on_path(tmp_path: Path) -> None:
    hook = fake_env(tmp_path, "hook-env", "2.13.0")
    project = fake_env(tmp_path, "project", "2.13.0")
    candidates = interpreter.candidate_interpreters(
        tmp_path,
        None,
        {"PATH": f"{hook.parent}:{project.parent}"},
        hook_prefix=tmp_path / "hook-env",
    )
    assert [c.path for c in candidates] == [project]


def test_project_venv_is_the_last_resort(tmp_path: Path) -> None:
    plain = fake_env(tmp_path, "plain", None)
    venv = fake_env(tmp_path, ".venv", "2.13.0")
    environ = {"PATH": str(plain.parent)}
    found = interpreter.find_project_interpreter(tmp_path, ["torch"], None, environ)
    assert found.path == venv
    assert found.origin == ".venv/ in the project root"


def test_no_interpreter_explains_how_to_fix_it(tmp_path: Path) -> None:
    plain = fake_env(tmp_path, "plain", None)
    with pytest.raises(EnvironmentProblem) as raised:
        interpreter.find_project_interpreter(
            tmp_path, ["torch"], None, {"PATH": str(plain.parent)}
        )
    message = str(raised.value)
    assert f"tried {plain} (PATH): cannot import torch" in message
    assert "MLSMOKE_PYTHON" in message
    assert "ci: skip" in message


def test_mlsmoke_runs_in_an_interpreter_where_it_is_not_installed(
    tmp_path: Path,
) -> None:
    bare = fake_env(tmp_path, "bare", None)
    assert "mlsmoke" not in interpreter.probe_modules(bare, ["mlsmoke"])
    completed = subprocess.run(
        project_command.module_command(bare, "mlsmoke.cli", "--version"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stdout.strip() == mlsmoke.__version__
