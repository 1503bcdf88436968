"""The hooks' caches on disk: one JSON entry per key under ``<root>/.mlsmoke/<hook>/``.

Shared by the gate's pass cache and the doctest hook's. The rules they both keep:

- an entry is written to a unique temporary file beside it and renamed over the old
  one, so concurrent hooks (two worktrees, a commit during ``--all-files``) never see
  half an entry;
- an entry that does not parse is a miss, and is later overwritten;
- a cache that cannot be written (a read-only checkout, a full disk) only costs the next
  run its shortcut: :class:`CacheNotWritten` says where and why;
- the project files a pass depends on are recorded by content; a pass is stored only if
  none of them changed while it ran (:func:`settled`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CACHE_DIR = ".mlsmoke"
KEEP_ENTRIES = 64
PARTIAL = ".partial"
STALE_PARTIAL_SECONDS = 3600  # a temporary file this old belongs to a dead writer


class CacheNotWritten(Exception):
    """An entry could not be stored; ``str()`` says where and why."""


def file_digest(path: Path) -> str:
    """The sha256 of ``path``'s bytes; "missing" when it cannot be read (deleted but
    still tracked: a change like any other). A symlink to a directory, which git lists
    as one file, is where it points: the files under it that a hook imports are
    recorded on their own."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except IsADirectoryError:
        return _link_digest(path)
    except OSError:
        return "missing"


def _link_digest(path: Path) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        return "directory"
    return "link:" + hashlib.sha256(os.fsencode(target)).hexdigest()


def sources_unchanged(root: Path, sources: Mapping[str, str]) -> bool:
    """Whether every recorded source file still has the recorded content."""
    return all(
        digest != "missing" and file_digest(root / name) == digest
        for name, digest in sources.items()
    )


def settled(root: Path, names: Sequence[str], started: float) -> bool:
    """Whether none of ``names`` was modified after ``started`` (a time.time())."""
    for name in names:
        try:
            if (root / name).stat().st_mtime > started:
                return False
        except OSError:
            return False
    return True


def stat_stamp(path: str) -> list[int] | None:
    """What changes when the file at ``path`` is rewritten or replaced."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return [stat.st_mtime_ns, stat.st_size, stat.st_ino]


class CacheDirectory:
    """JSON entries named by key in ``<root>/.mlsmoke/<hook>/``, the newest
    ``keep`` of them kept."""

    def __init__(self, root: Path, hook: str, keep: int = KEEP_ENTRIES) -> None:
        self.directory = root / CACHE_DIR / hook
        self.keep = keep

    def read(self, key: str) -> Any:
        """The entry stored under ``key``; None when it is missing or garbled."""
        try:
            return json.loads((self.directory / f"{key}.json").read_bytes())
        except (OSError, ValueError, RecursionError):
            return None

    def write(self, key: str, entry: Any) -> None:
        """Store ``entry`` under ``key``; CacheNotWritten when that cannot be done."""
        try:
            self.prepare()
            write_text_atomically(self.directory / f"{key}.json", json.dumps(entry))
            self._prune()
        except OSError as error:
            reason = error.strerror or str(error)
            raise CacheNotWritten(f"{self.directory}: {reason}") from None

    def prepare(self) -> None:
        """The directory, made, and ignored by git."""
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory.parent / ".gitignore"
        if not ignore.exists():
            write_text_atomically(ignore, "# mlsmoke's cache; safe to delete\n*\n")

    def _prune(self) -> None:
        """Keep the newest entries; files other hooks remove meanwhile are skipped."""
        entries = []
        for path in self.directory.iterdir():
            try:
                modified = path.stat().st_mtime
            except OSError:
                continue
            if path.name.endswith(PARTIAL):
                if time.time() - modified > STALE_PARTIAL_SECONDS:
                    path.unlink(missing_ok=True)
            elif path.suffix == ".json":
                entries.append((modified, path))
        entries.sort(reverse=True)
        for _, stale in entries[self.keep :]:
            stale.unlink(missing_ok=True)


def write_text_atomically(path: Path, text: str) -> None:
    """``text`` to ``path`` through a temporary file of a name no other writer has;
    0644, so that others can read .gitignore."""
    from mlsmoke.atomic import write_atomically  # tempfile: a hit writes nothing

    data = text.encode("utf-8")
    write_atomically(path, data, 0o644, prefix=f".{path.name}.", suffix=PARTIAL)
