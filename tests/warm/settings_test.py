"""When the hooks use the warm worker: decisions on plain values."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.errors import ConfigError
from mlsmoke.warm.code_digest import code_digest
from mlsmoke.worker_command import in_order
from mlsmoke.warm.identity import dependency_name, worker_identity
from mlsmoke.warm.memory import describe_bytes, resident_bytes
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


def test_the_key_ignores_the_caller(tmp_path: Path):
    python = Path("/usr/bin/python3")
    base = {"PATH": "/bin", "HOME": "/home/u"}
    cli = worker_identity(tmp_path, python, ["torch"], base, "0.1.0:abc")
    callers = [
        {**base, "GIT_INDEX_FILE": "a", "PATH": "/usr/lib/git-core:/bin"},  # git
        {**base, "PRE_COMMIT": "1", "PATH": "/env/bin:/bin", "VIRTUAL_ENV": "/env"},
        {**base, "MLSMOKE_RUN": "b", "TERM": "dumb"},
    ]
    for environ in callers:
        assert worker_identity(tmp_path, python, ["torch"], environ, "0.1.0:abc") == cli


def test_the_key_follows_what_makes_workers_differ(tmp_path: Path):
    python = Path("/usr/bin/python3")
    one = worker_identity(tmp_path, python, ["torch"], {}, "0.1.0:abc")
    others = [
        worker_identity(tmp_path / "x", python, ["torch"], {}, "0.1.0:abc"),
        worker_identity(tmp_path, Path("/opt/py"), ["torch"], {}, "0.1.0:abc"),
        worker_identity(tmp_path, python, ["torch", "numpy"], {}, "0.1.0:abc"),
        worker_identity(tmp_path, python, ["torch"], {"PYTHONPATH": "/x"}, "0.1.0:abc"),
    ]
    assert len({one.key, *(other.key for other in others)}) == 1 + len(others)
    # other mlsmoke code: the same socket, whose worker the job retires
    code = worker_identity(tmp_path, python, ["torch"], {}, "0.1.0:def")
    assert code.key == one.key and code != one


def test_the_code_digest_is_the_content_wherever_it_lies(tmp_path: Path):
    for copy in ("a", "b"):
        (tmp_path / copy / "warm").mkdir(parents=True)
        (tmp_path / copy / "__init__.py").write_text("VERSION = 1\n")
        (tmp_path / copy / "warm" / "server.py").write_text("X = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    first = code_digest(tmp_path / "a", cache)
    assert code_digest(tmp_path / "a", cache) == first  # from the cache
    assert code_digest(tmp_path / "b", None) == first
    (tmp_path / "b" / "warm" / "server.py").write_text("X = 2\n")
    assert code_digest(tmp_path / "b", cache) != first


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("Name:\tpython\nVmRSS:\t  301224 kB\nThreads: 1\n", 301224 * 1024),
        ("Name:\tpython\n", None),
        ("VmRSS:\t\n", None),
    ],
)
def test_resident_memory_from_proc_status(text, size):
    assert resident_bytes(text) == size
    assert describe_bytes(size) == ("unknown" if size is None else "294 MB")


def test_status_lists_the_project_here_first():
    workers = [
        (Path("b.sock"), {"root": "/z/other"}),
        (Path("a.sock"), {"root": "/p/here"}),
        (Path("c.sock"), {"root": "/a/third"}),
    ]
    roots = [w[1]["root"] for w in in_order(workers, Path("/p/here"))]
    assert roots == ["/p/here", "/a/third", "/z/other"]


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
