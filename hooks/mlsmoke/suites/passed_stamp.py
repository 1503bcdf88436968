"""``mlsmoke suites check --if-changed``, the pre-push hook: the check runs when the
checkpoint (or the recorded suites, or the configuration) changed since its last
pass. A pass is kept under ``.mlsmoke/suites/``, keyed by the digests of all three."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mlsmoke import __version__
from mlsmoke.cache_files import CacheDirectory, CacheNotWritten, file_digest
from mlsmoke.project_root import PYPROJECT

HOOK = "suites"


def stamp(root: Path, checkpoint: Path, directory: Path) -> str:
    """The digest of what a check's verdict depends on."""
    parts = [__version__, file_digest(checkpoint), file_digest(root / PYPROJECT)]
    if directory.is_dir():
        parts += [
            f"{path.name}:{file_digest(path)}"
            for path in sorted(directory.glob("*.json"))
        ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def passed_before(root: Path, key: str) -> bool:
    return CacheDirectory(root, HOOK).read(key) is not None


def remember_pass(root: Path, key: str, checkpoint: str) -> str | None:
    """Keep the pass; the reason it could not be kept, if so (it only costs the
    shortcut)."""
    try:
        CacheDirectory(root, HOOK).write(key, {"checkpoint": checkpoint})
    except CacheNotWritten as error:
        return str(error)
    return None
