"""The pass cache from plain values: globs, the key, and entries not to be trusted."""

from __future__ import annotations

import json
import os

import pytest

from mlsmoke.globs import glob_regex
from mlsmoke.overfit.process.cache import (
    PassCache,
    cache_key,
    files_digest,
    torch_unchanged,
    watched_files,
)
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


def test_key_follows_settings_tier_device_and_interpreter(monkeypatch):
    gate = GateSettings(name="default", model="m:f", batch="b:f")
    key = cache_key(gate, "auto", "files")
    assert key == cache_key(gate, "auto", "files")
    assert key != cache_key(GateSettings(name="default", model="m:f", batch="b:f",
                                         tier="pr"), "auto", "files")  # fmt: skip
    assert key != cache_key(gate, "cpu", "files")
    assert key != cache_key(gate, "auto", "other files")
    monkeypatch.setenv("MLSMOKE_PYTHON", "/other/venv/bin/python")
    assert key != cache_key(gate, "auto", "files")


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
