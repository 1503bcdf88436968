"""The pass cache from plain values: globs, the key, and entries not to be trusted."""

from __future__ import annotations

import errno
import importlib
import io
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mlsmoke import interpreter
from mlsmoke.errors import ConfigError
from mlsmoke.globs import glob_regex
from mlsmoke import cache_files
from mlsmoke.overfit.process import cache as cache_module
from mlsmoke.overfit.process.cache import (
    CacheNotWritten,
    PassCache,
    cache_key,
    files_digest,
    torch_unchanged,
    watched_files,
)
from mlsmoke.overfit.process.imports import project_modules
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.result import Diagnosis, Result


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("**/*.py", "model.py", True),
        ("**/*.py", "src/pkg/model.py", True),
        ("**/*.py", "model.pyc", False),
        ("src/*.py", "src/pkg/model.py", False),
        ("src/**", "src/pkg/model.py", True),
        ("pyproject.toml", "pyproject.toml", True),
        ("pyproject.toml", "sub/pyproject.toml", False),
        ("data/?.csv", "data/a.csv", True),
    ],
)
def test_glob_regex(glob, path, matches):
    assert bool(glob_regex(glob).match(path)) is matches


def test_watched_files_skip_virtualenvs_outside_git(tmp_path):
    for name in ["a.py", "pkg/b.py", ".venv/lib/c.py", "notes.md", "pyproject.toml"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    names = watched_files(tmp_path, ["**/*.py", "pyproject.toml"])
    assert names == ["a.py", "pkg/b.py", "pyproject.toml"]


def test_digest_follows_content(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    before = files_digest(tmp_path, ["a.py"])
    (tmp_path / "a.py").write_text("x = 2\n")
    assert files_digest(tmp_path, ["a.py"]) != before


def test_key_follows_settings_tier_device_and_interpreter():
    gate = GateSettings(name="default", model="m:f", batch="b:f")
    key = cache_key(gate, "auto", "files")
    assert key == cache_key(gate, "auto", "files")
    assert key != cache_key(GateSettings(name="default", model="m:f", batch="b:f",
                                         tier="pr"), "auto", "files")  # fmt: skip
    assert key != cache_key(gate, "cpu", "files")
    assert key != cache_key(gate, "auto", "other files")
    venv = [["/a/.venv/bin/python", "/usr/bin/python3.11"]]
    assert key != cache_key(gate, "auto", "files", venv)
    assert cache_key(gate, "auto", "files", venv) != cache_key(
        gate, "auto", "files", [["/b/.venv/bin/python", "/usr/bin/python3.11"]]
    )


@pytest.fixture
def stamp(tmp_path):
    metadata = tmp_path / "torch-2.13.0.dist-info" / "METADATA"
    metadata.parent.mkdir()
    metadata.write_text("Name: torch\nVersion: 2.13.0\n")
    stat = metadata.stat()
    return {
        "version": "2.13.0",
        "metadata": str(metadata),
        "mtime_ns": stat.st_mtime_ns,
        "size": stat.st_size,
        "inode": stat.st_ino,
    }


PASS = Result("default", Diagnosis("memorized", "ok"), losses=[1.0, 0.01], steps=1)


def test_a_stored_pass_is_found_until_torch_changes(tmp_path, stamp):
    cache = PassCache(tmp_path)
    cache.store("k", PASS, stamp)
    assert (tmp_path / ".mlsmoke" / ".gitignore").read_text().endswith("*\n")
    hit = cache.lookup("k")
    assert hit is not None and hit.cached and hit.losses == PASS.losses
    assert cache.lookup("other") is None
    os.utime(stamp["metadata"], ns=(1, 1))  # torch reinstalled
    assert not torch_unchanged(stamp) and cache.lookup("k") is None


def test_failures_and_unstamped_passes_are_not_stored(tmp_path, stamp):
    cache = PassCache(tmp_path)
    cache.store("fail", Result("default", Diagnosis("not-memorized", "no")), stamp)
    cache.store("nostamp", PASS, {"version": "2.13.0"})
    assert cache.lookup("fail") is None and cache.lookup("nostamp") is None


@pytest.mark.parametrize(
    "corrupt",
    [
        "not json",
        "[]",
        '{"key": "k"}',
        '{"key": "k", "torch": {}, "result": {}}',
        '{"key": "other", "torch": null, "result": null}',
    ],
)
def test_corrupt_entries_are_ignored(tmp_path, stamp, corrupt):
    cache = PassCache(tmp_path)
    cache.store("k", PASS, stamp)
    entry = tmp_path / ".mlsmoke" / "overfit" / "k.json"
    entry.write_text(corrupt)
    assert cache.lookup("k") is None
    cache.store("k", PASS, stamp)  # and overwritten by the next pass
    assert json.loads(entry.read_text())["key"] == "k"


def project(root, names):
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n")
    return root


@pytest.mark.parametrize("entry", ["src", "src/", "./src", "src/**", "s*"])
def test_a_directory_in_watch_means_everything_under_it(tmp_path, entry):
    project(tmp_path, ["src/pkg/model.py", "src/data.csv", "srcs.py", "other.py"])
    assert watched_files(tmp_path, [entry], "k.watch") == [
        "src/data.csv",
        "src/pkg/model.py",
    ] + (["srcs.py"] if entry == "s*" else [])


@pytest.mark.parametrize("entry", ["src", "**/*.pyx", "model.py/"])
def test_a_watch_entry_that_matches_nothing_is_a_config_error(tmp_path, entry):
    project(tmp_path, ["pkg/model.py"])
    with pytest.raises(ConfigError) as raised:
        watched_files(tmp_path, ["pkg", entry], "tool.mlsmoke.overfit.watch")
    assert str(raised.value).startswith(
        f"tool.mlsmoke.overfit.watch: {entry!r} matches no file in {tmp_path}"
    )
    assert watched_files(tmp_path, [entry]) == []  # no key path: no error


def test_a_change_to_an_imported_file_invalidates_the_pass(tmp_path, stamp):
    project(tmp_path, ["pkg/model.py", "pkg/layers.py"])
    cache = PassCache(tmp_path)
    result = Result("default", Diagnosis("memorized", "ok"), sources=["pkg/model.py",
                    "pkg/layers.py"])  # fmt: skip
    cache.store("k", result, stamp, started=time.time() + 1)
    assert cache.lookup("k") is not None
    (tmp_path / "pkg/layers.py").write_text("# changed\n")
    assert cache.lookup("k") is None
    (tmp_path / "pkg/layers.py").write_text("# pkg/layers.py\n")
    assert cache.lookup("k") is not None  # the same content again: the same pass
    (tmp_path / "pkg/model.py").unlink()
    assert cache.lookup("k") is None


def test_a_pass_whose_sources_changed_while_it_ran_is_not_stored(tmp_path, stamp):
    project(tmp_path, ["pkg/model.py"])
    started = time.time() - 60
    os.utime(tmp_path / "pkg/model.py")  # edited after the gate started
    result = Result("default", Diagnosis("memorized", "ok"), sources=["pkg/model.py"])
    PassCache(tmp_path).store("k", result, stamp, started)
    assert PassCache(tmp_path).lookup("k") is None


@pytest.mark.parametrize(
    "garbage",
    [b"\xff\xfe\x00garbage", b"[" * 100_000, b"", b'{"key": "k", "torch"'],
    ids=["binary", "deep", "empty", "truncated"],
)
def test_garbage_and_truncated_entries_are_misses(tmp_path, stamp, garbage):
    cache = PassCache(tmp_path)
    cache.store("k", PASS, stamp)
    (tmp_path / ".mlsmoke" / "overfit" / "k.json").write_bytes(garbage)
    assert cache.lookup("k") is None


def test_an_entry_without_recorded_sources_is_not_trusted(tmp_path, stamp):
    cache = PassCache(tmp_path)
    cache.store("k", PASS, stamp)
    entry = tmp_path / ".mlsmoke" / "overfit" / "k.json"
    data = json.loads(entry.read_text())
    del data["sources"]
    entry.write_text(json.dumps(data))
    assert cache.lookup("k") is None


class FullDisk(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize(
    ("fault", "message"),
    [("write", "No space left on device"), ("create", "Read-only file system")],
)
def test_a_cache_that_cannot_be_written_says_so_and_leaves_nothing(
    tmp_path, stamp, monkeypatch, fault, message
):
    (tmp_path / ".mlsmoke" / "overfit").mkdir(parents=True)
    if fault == "write":
        monkeypatch.setattr(cache_module.os, "fdopen", lambda fd, *a, **k: (
            os.close(fd), FullDisk())[1])  # fmt: skip
    else:

        def read_only(*args, **kwargs):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(CacheNotWritten, match=message):
        PassCache(tmp_path).store("k", PASS, stamp)
    monkeypatch.undo()
    assert sorted(p.name for p in (tmp_path / ".mlsmoke").rglob("*")) == ["overfit"]
    assert PassCache(tmp_path).lookup("k") is None


def _hammer(root: str, stamp: dict, rounds: int) -> list[str]:
    """Store and look up the same key; what each lookup saw."""
    cache, seen = PassCache(Path(root)), []
    for _ in range(rounds):
        cache.store("k", PASS, stamp)
        hit = cache.lookup("k")
        seen.append("hit" if hit is not None and hit.losses == PASS.losses else "miss")
    return seen


def test_concurrent_writers_never_leave_half_an_entry(tmp_path, stamp):
    context = multiprocessing.get_context("fork")
    with context.Pool(4) as pool:
        seen = pool.starmap(_hammer, [(str(tmp_path), stamp, 40)] * 4)
    assert {outcome for run in seen for outcome in run} == {"hit"}
    assert [p.name for p in (tmp_path / ".mlsmoke" / "overfit").iterdir()] == ["k.json"]


def test_pruning_keeps_the_newest_entries(tmp_path, stamp):
    cache = PassCache(tmp_path)
    cache.entries.keep = 3
    for number in range(5):
        cache.store(f"k{number}", PASS, stamp)
        os.utime(cache.directory / f"k{number}.json", (number, number))
    stale = cache.directory / f".k9.json.x{cache_files.PARTIAL}"
    stale.write_text("{")
    os.utime(stale, (0, 0))  # a writer that died long ago
    cache.store("k5", PASS, stamp)
    assert sorted(p.name for p in cache.directory.iterdir()) == [
        "k3.json", "k4.json", "k5.json"]  # fmt: skip


def test_project_modules_are_the_imported_files_under_the_root(tmp_path, monkeypatch):
    project(tmp_path, ["src/pkg/__init__.py", "src/pkg/model.py", "unused.py",
                       ".venv/lib/python3.11/site-packages/dep.py"])  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path / ".venv/lib/python3.11/site-packages"))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    for name in ["pkg", "pkg.model", "dep"]:
        monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module("pkg.model")
    importlib.import_module("dep")
    try:
        assert project_modules(tmp_path) == ["src/pkg/__init__.py", "src/pkg/model.py"]
    finally:
        for name in ["pkg", "pkg.model", "dep"]:
            sys.modules.pop(name, None)


def test_a_package_linked_into_the_project_is_recorded_under_the_root(
    tmp_path, monkeypatch
):
    root, shared = tmp_path / "project", tmp_path / "shared"
    project(shared, ["__init__.py", "model.py"])
    root.mkdir()
    (root / "pkg").symlink_to(shared, target_is_directory=True)  # a monorepo's link
    monkeypatch.syspath_prepend(str(root))
    for name in ["pkg", "pkg.model"]:
        monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module("pkg.model")
    try:
        assert project_modules(root) == ["pkg/__init__.py", "pkg/model.py"]
    finally:
        for name in ["pkg", "pkg.model"]:
            sys.modules.pop(name, None)
    sources = {"pkg/model.py": cache_module.file_digest(root / "pkg/model.py")}
    assert cache_module.sources_unchanged(root, sources)
    (shared / "model.py").write_text("# edited through the link's target\n")
    assert not cache_module.sources_unchanged(root, sources)


def test_linked_module_files_are_recorded_by_the_name_under_the_root(tmp_path):
    root, shared, site = tmp_path / "project", tmp_path / "shared", tmp_path / "site"
    project(root, ["src/pkg/model.py", ".venv/lib/site-packages/dep.py"])
    project(shared, ["common.py", "vendored.py"])
    site.mkdir()
    (root / "common.py").symlink_to(shared / "common.py")  # a file linked in
    (site / "editable.py").symlink_to(root / "src" / "pkg" / "model.py")
    (root / "gone.py").symlink_to(tmp_path / "nowhere.py")
    files = [root / "src/pkg/../pkg/model.py", root / ".venv/lib/site-packages/dep.py",
             root / "common.py", site / "editable.py", root / "gone.py",
             shared / "vendored.py"]  # fmt: skip
    modules = [SimpleNamespace(__file__=str(file)) for file in files]
    assert project_modules(root, modules) == ["common.py", "src/pkg/model.py"]
    assert project_modules(root, modules[3:4]) == ["src/pkg/model.py"]


def test_a_linked_directory_is_watched_by_where_it_points(tmp_path):
    project(tmp_path, ["a/model.py", "b/model.py", "main.py"])
    (tmp_path / "pkg").symlink_to("a", target_is_directory=True)
    before = files_digest(tmp_path, ["main.py", "pkg"])
    (tmp_path / "pkg").unlink()
    (tmp_path / "pkg").symlink_to("b", target_is_directory=True)
    assert files_digest(tmp_path, ["main.py", "pkg"]) != before


def _fake_environment(root: Path, name: str, torch: bool) -> Path:
    """``root/name/bin/python``, importing from ``root/name/site`` only."""
    site = root / name / "site"
    site.mkdir(parents=True)
    if torch:
        (site / "torch").mkdir()
        (site / "torch" / "__init__.py").write_text("")
    python = root / name / "bin" / "python"
    python.parent.mkdir()
    base = getattr(sys, "_base_executable", sys.executable)
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{base}" -S "$@"\n')
    python.chmod(0o755)
    return python


def test_a_pass_is_stale_once_an_interpreter_found_before_gains_torch(tmp_path, stamp):
    without = _fake_environment(tmp_path, "without", torch=False)
    with_torch = _fake_environment(tmp_path, "with", torch=True)
    search = f"{without.parent}{os.pathsep}{with_torch.parent}"
    candidates = interpreter.project_candidates(tmp_path, None, {"PATH": search})
    chosen = interpreter.first_that_imports(candidates, ["torch"])
    assert chosen.path == with_torch
    assert str(tmp_path / "without" / "site") in chosen.passed_over
    cache = PassCache(tmp_path)
    cache.store("k", PASS, stamp, passed_over=chosen.passed_over)
    assert cache.lookup("k") is not None
    (tmp_path / "without" / "site" / "torch").mkdir()  # torch installed there
    assert cache.lookup("k") is None  # the search would now choose `without`
