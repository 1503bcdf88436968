"""When the hooks use the warm worker: decisions on plain values."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.errors import ConfigError
from mlsmoke.warm.identity import dependency_name, worker_identity
from mlsmoke.warm.settings import DEFAULT_IDLE, worker_settings


def _root(tmp_path: Path, table: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.mlsmoke.worker]\n{table}")
    return tmp_path


def test_on_by_default_on_linux(tmp_path: Path):
    settings = worker_settings(_root(tmp_path), {}, platform="linux")
    assert settings.enabled and settings.idle == DEFAULT_IDLE


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_off_where_fork_after_torch_is_not_safe(tmp_path: Path, platform: str):
    settings = worker_settings(_root(tmp_path), {}, platform=platform)
    assert not settings.enabled and platform in settings.why_off


@pytest.mark.parametrize("value", ["0", "off", "False", "no"])
def test_the_environment_variable_turns_it_off(tmp_path: Path, value: str):
    settings = worker_settings(_root(tmp_path), {"MLSMOKE_WORKER": value}, "linux")
    assert not settings.enabled and "MLSMOKE_WORKER" in settings.why_off


def test_the_config_key_turns_it_off_and_sets_the_idle_limit(tmp_path: Path):
    root = _root(tmp_path, "enabled = false\nidle = 30\n")
    settings = worker_settings(root, {}, "linux")
    assert not settings.enabled and settings.idle == 30.0
    assert settings.why_off == "tool.mlsmoke.worker.enabled = false"


@pytest.mark.parametrize(
    ("table", "environ", "says"),
    [
        ("enabled = 1\n", {}, "tool.mlsmoke.worker.enabled: expected true or false"),
        ("idle = -1\n", {}, "tool.mlsmoke.worker.idle: expected a finite number"),
        ("idel = 5\n", {}, "tool.mlsmoke.worker.idel: unknown key"),
        ("", {"MLSMOKE_WORKER_IDLE": "soon"}, "MLSMOKE_WORKER_IDLE: expected"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, table, environ, says):
    with pytest.raises(ConfigError, match=says):
        worker_settings(_root(tmp_path, table), environ, "linux")


def test_the_key_ignores_what_changes_between_commits_only(tmp_path: Path):
    python = Path("/usr/bin/python3")
    base = {"PATH": "/bin", "HOME": "/home/u"}
    one = worker_identity(tmp_path, python, ["torch"], {**base, "GIT_INDEX_FILE": "a"})
    two = worker_identity(tmp_path, python, ["torch"], {**base, "MLSMOKE_RUN": "b"})
    assert one.key == two.key
    moved = worker_identity(tmp_path, python, ["torch"], {**base, "PATH": "/usr/bin"})
    other = worker_identity(tmp_path / "x", python, ["torch"], base)
    more = worker_identity(tmp_path, python, ["torch", "numpy"], base)
    assert len({one.key, moved.key, other.key, more.key}) == 4


@pytest.mark.parametrize(
    ("requirement", "name"),
    [
        ("numpy>=1.26", "numpy"),
        ("torch==2.13.0", "torch"),
        ("scikit-learn [extra] ~= 1.4", "scikit-learn"),
        ("pywin32; sys_platform == 'win32'", ""),  # not for every platform
        (3, ""),
    ],
)
def test_dependency_names(requirement, name):
    assert dependency_name(requirement) == name
