"""The pass cache: a gate that passed is not run again until something it depends on
changes.

A pass is stored under a key built from the gate's settings (tier included), the
requested device and the accelerator this machine has, the content of every watched
file (a directory in ``watch`` is everything under it; of pyproject.toml, what can
change a run: ``pyproject_digest.py``), the interpreters the gate
would be run in (found, not started: see ``interpreter.project_candidates``), and
mlsmoke's version. When the interpreter used was not the first candidate, the entry
stamps the import directories of those before it: torch installed there would make
another interpreter the project's. The entry
also records the project files the factories imported, with their content: a change to
any of them, or its removal, invalidates the pass even when ``watch`` forgets them. The
torch version is checked without starting the project's interpreter: the pass records
where torch's dist-info METADATA is and its stat, which changes whenever torch is
reinstalled or upgraded.

Failures are never stored. An entry that does not parse or does not match is ignored
and later overwritten. Entries are written to a unique temporary file in the same
directory and renamed over the old one, so concurrent gates (two worktrees, a commit
during ``--all-files``) never see half an entry; a cache that cannot be written (a
read-only checkout, a full disk) only costs the next run its shortcut.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import mlsmoke
from mlsmoke.cache_files import (
    CacheDirectory,
    CacheNotWritten,
    file_digest,
    settled,
    sources_unchanged,
)
from mlsmoke.project_root import PYPROJECT
from mlsmoke.errors import ConfigError
from mlsmoke.globs import glob_regex
from mlsmoke.interpreter import still_passed_over
from mlsmoke.overfit.process.pyproject_digest import pyproject_digest
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.result import Result

__all__ = ["CacheNotWritten", "PassCache", "cache_key", "files_digest"]

_SKIP_DIRS = {".git", ".mlsmoke", ".venv", "venv", "node_modules", "__pycache__"}


def watched_files(
    root: Path, globs: Sequence[str], key_path: str | None = None
) -> list[str]:
    """The project files (relative, '/'-separated, sorted) matching any of ``globs``;
    a glob naming a directory matches everything under it. With ``key_path``, a glob
    that matches no file is a ConfigError naming it: it would leave the pass unguarded.
    """
    files = list(_project_files(root))
    matched: set[str] = set()
    for glob in globs:
        found = _matching(glob, files)
        if not found and key_path is not None:
            raise ConfigError(
                f"{key_path}: {glob!r} matches no file in {root} (files ignored by"
                " git are not watched); name a file, a directory or a glob that exists"
            )
        matched.update(found)
    return sorted(matched)


def _matching(glob: str, files: Sequence[str]) -> list[str]:
    glob = glob.strip()
    while glob.startswith("./"):
        glob = glob[2:]
    glob = glob.rstrip("/")
    if not glob:
        return []
    itself, under = glob_regex(glob), glob_regex(f"{glob}/**")
    return [name for name in files if itself.match(name) or under.match(name)]


def _project_files(root: Path) -> Iterable[str]:
    """Tracked and untracked-but-not-ignored files; a directory walk outside git."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", "surrogateescape")
        return [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return _walk(root)


def _walk(root: Path) -> list[str]:
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in _SKIP_DIRS and not _is_venv(d)]
        base = Path(directory).relative_to(root).as_posix()
        found += [name if base == "." else f"{base}/{name}" for name in files]
    return found


def _is_venv(name: str) -> bool:
    return name.endswith("-packages") or name.startswith(".tox")


def files_digest(root: Path, names: Sequence[str]) -> str:
    """The digest of the watched files; the project's pyproject.toml counts by what of
    it can change a run (``pyproject_digest``): its description is no change."""
    digest = hashlib.sha256()
    for name in names:
        if name == PYPROJECT:
            content = pyproject_digest(root / name)
        else:
            content = file_digest(root / name)
        digest.update(f"{name}\0{content}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def accelerator_hint() -> str:
    """What accelerator this machine has, found without torch (part of the key, so a
    pass on a CPU-only machine is not trusted on a GPU one)."""
    if Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists():
        return "cuda"
    if sys.platform == "darwin" and os.uname().machine == "arm64":
        return "mps"
    return "cpu"


def cache_key(
    settings: GateSettings,
    device: str,
    files: str,
    interpreters: Sequence[Sequence[str]] = (),
) -> str:
    """``interpreters``: the candidates the gate's interpreter is chosen from, in
    order (``interpreter.candidate_identity``). Another environment may hold another
    torch, or none: choosing from others is a change."""
    parts = {
        "mlsmoke": mlsmoke.__version__,
        "gate": settings.to_json(),
        "device": device,
        "accelerator": accelerator_hint(),
        "files": files,
        "interpreters": [list(identity) for identity in interpreters],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def torch_unchanged(stamp: dict[str, Any]) -> bool:
    """Whether the torch install recorded in ``stamp`` is still the one there."""
    try:
        stat = os.stat(stamp["metadata"])
    except (KeyError, TypeError, OSError):
        return False
    recorded = (stamp.get("mtime_ns"), stamp.get("size"), stamp.get("inode"))
    return recorded == (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class PassCache:
    """Passes stored as one JSON file per key under ``<root>/.mlsmoke/overfit/``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries = CacheDirectory(root, "overfit")
        self.directory = self.entries.directory

    def lookup(self, key: str) -> Result | None:
        """The stored pass for ``key``, if every file it depends on is unchanged."""
        entry = self.entries.read(key)
        try:
            if entry["key"] != key or not torch_unchanged(entry["torch"]):
                return None
            if not still_passed_over(entry["passed_over"]):
                return None
            if not sources_unchanged(self.root, dict(entry["sources"])):
                return None
            result = Result.from_json(entry["result"])
        except (OSError, ValueError, LookupError, TypeError, AttributeError):
            return None  # missing or corrupt: never trusted
        if not result.passed:
            return None
        result.cached = True
        return result

    def store(
        self,
        key: str,
        result: Result,
        torch: dict[str, Any],
        started: float | None = None,
        passed_over: Mapping[str, Any] | None = None,
    ) -> None:
        """Record a pass; failures and passes without a torch stamp are not stored,
        nor a pass whose sources changed after ``started`` (a time.time() taken before
        the gate ran). ``passed_over``: ``Interpreter.passed_over`` of the interpreter
        that ran it. Raises CacheNotWritten when the cache cannot be written."""
        if not result.passed or "metadata" not in torch:
            return
        sources = {name: file_digest(self.root / name) for name in result.sources}
        if started is not None and not settled(self.root, result.sources, started):
            return
        entry = {"key": key, "torch": torch, "sources": sources}
        entry["passed_over"] = dict(passed_over or {})
        entry["result"] = result.to_json()
        self.entries.write(key, entry)
