"""The pass cache: a gate that passed is not run again until something it depends on
changes.

A pass is stored under a key built from the gate's settings (tier included), the
requested device and the accelerator this machine has, the content of every watched
file, and mlsmoke's version. The torch version is checked without starting the project's
interpreter: the pass records where torch's dist-info METADATA is and its stat, which
changes whenever torch is reinstalled or upgraded. Failures are never stored; an entry
that does not parse or does not match is ignored and later overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import mlsmoke
from mlsmoke.globs import glob_regex
from mlsmoke.interpreter import ENV_VARIABLE
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.result import Result

CACHE_DIR = ".mlsmoke"
KEEP_ENTRIES = 64
_SKIP_DIRS = {".git", ".mlsmoke", ".venv", "venv", "node_modules", "__pycache__"}


def watched_files(root: Path, globs: Sequence[str]) -> list[str]:
    """The project files (relative, '/'-separated, sorted) matching any of ``globs``."""
    patterns = [glob_regex(glob) for glob in globs]
    return sorted(
        name for name in _project_files(root) if any(p.match(name) for p in patterns)
    )


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
    digest = hashlib.sha256()
    for name in names:
        try:
            content = hashlib.sha256((root / name).read_bytes()).hexdigest()
        except OSError:
            content = "missing"  # deleted but still tracked: a change like any other
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


def cache_key(settings: GateSettings, device: str, files: str) -> str:
    parts = {
        "mlsmoke": mlsmoke.__version__,
        "gate": settings.to_json(),
        "device": device,
        "accelerator": accelerator_hint(),
        "files": files,
        # An explicit interpreter may hold another torch: choosing another is a change.
        "interpreter": os.environ.get(ENV_VARIABLE, ""),
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
        self.directory = root / CACHE_DIR / "overfit"

    def lookup(self, key: str) -> Result | None:
        try:
            entry = json.loads((self.directory / f"{key}.json").read_text())
            if entry["key"] != key or not torch_unchanged(entry["torch"]):
                return None
            result = Result.from_json(entry["result"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # missing or corrupt: never trusted
        if not result.passed:
            return None
        result.cached = True
        return result

    def store(self, key: str, result: Result, torch: dict[str, Any]) -> None:
        """Record a pass; failures and passes without a torch stamp are not stored."""
        if not result.passed or "metadata" not in torch:
            return
        entry = {"key": key, "torch": torch, "result": result.to_json()}
        try:
            self._prepare()
            _write_atomically(self.directory / f"{key}.json", json.dumps(entry))
            self._prune()
        except OSError:
            pass  # a read-only checkout still runs the gate, only uncached

    def _prepare(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# mlsmoke's cache; safe to delete\n*\n")

    def _prune(self) -> None:
        entries = sorted(
            self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True
        )
        for stale in entries[KEEP_ENTRIES:]:
            stale.unlink(missing_ok=True)


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
