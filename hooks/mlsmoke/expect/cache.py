"""A check that passed is not run again until something it depends on changes: the
expect table, the suite, a declared data file (its size and a hash of its first and
last 64 KiB), the interpreter, mlsmoke's version, or any project file the loaders
imported (recorded with its content, as the gate's pass cache does)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import mlsmoke
from mlsmoke.cache_files import (
    CacheDirectory,
    CacheNotWritten,
    file_digest,
    sources_unchanged,
)
from mlsmoke.expect.settings import TABLE, ExpectSettings
from mlsmoke.interpreter import Candidate, candidate_identity
from mlsmoke.overfit.process.cache import watched_files

SAMPLE_BYTES = 65536

__all__ = ["CacheNotWritten", "PassCache", "check_key"]


def check_key(root: Path, settings: ExpectSettings, candidates: list[Candidate]) -> str:
    data = watched_files(root, settings.data, f"{TABLE}.data") if settings.data else []
    parts = {
        "settings": settings.to_json(),
        "suite": file_digest(root / settings.suite),
        "data": {name: data_stamp(root / name) for name in data},
        "python": [candidate_identity(c) for c in candidates],
        "mlsmoke": mlsmoke.__version__,
    }
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def data_stamp(path: Path) -> str:
    """A data file's size and a hash of its ends: cheap for a file of gigabytes."""
    try:
        size = path.stat().st_size
        with path.open("rb") as stream:
            head = stream.read(SAMPLE_BYTES)
            stream.seek(max(0, size - SAMPLE_BYTES))
            tail = stream.read(SAMPLE_BYTES)
    except OSError:
        return "missing"
    return f"{size}:{hashlib.sha256(head + tail).hexdigest()[:16]}"


class PassCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.directory = CacheDirectory(root, "expect")

    def passed(self, key: str) -> bool:
        entry = self.directory.read(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("sources"), dict):
            return False
        return sources_unchanged(self.root, entry["sources"])

    def store(self, key: str, sources: list[str], checked: int) -> None:
        entry: dict[str, Any] = {
            "sources": {name: file_digest(self.root / name) for name in sources},
            "checked": checked,
        }
        self.directory.write(key, entry)

    def checked(self, key: str) -> int:
        entry = self.directory.read(key)
        return int(entry.get("checked", 0)) if isinstance(entry, dict) else 0
