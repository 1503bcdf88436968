"""Which mlsmoke code a worker runs: a digest of the package's Python files.

pre-commit installs mlsmoke in a hook environment of its own, so ``git commit`` and
``mlsmoke overfit`` in the same project load mlsmoke from two directories. The same
code in both must mean the same worker, so the key takes the files' content, not
their directory. Hashing about 240 files costs some 20 ms; their stat costs about
1 ms, so the digest is kept in the workers' directory under the stat's own digest.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from mlsmoke.atomic import write_atomically


def python_files(package: Path) -> list[Path]:
    """The package's ``.py`` files, in a fixed order (caches left out)."""
    found = []
    for directory, subdirectories, files in os.walk(package):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        found.extend(Path(directory, name) for name in sorted(files))
    return [path for path in found if path.suffix == ".py"]


def stat_digest(package: Path, files: list[Path]) -> str:
    digest = hashlib.sha256(str(package).encode())
    for path in files:
        status = path.stat()
        digest.update(f"\0{path}\0{status.st_mtime_ns}\0{status.st_size}".encode())
    return digest.hexdigest()[:24]


def content_digest(package: Path, files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"\0{path.relative_to(package).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def code_digest(package: Path, cache: Path | None) -> str:
    """The digest of ``package``'s code, through the cache in directory ``cache``."""
    try:
        files = python_files(package)
        kept = cache / f"code-{stat_digest(package, files)}" if cache else None
    except OSError:
        return f"unreadable:{package}"
    if kept is not None:
        try:
            return kept.read_text().strip()
        except OSError:
            pass
    try:
        digest = content_digest(package, files)
    except OSError:
        return f"unreadable:{package}"
    if kept is not None:
        try:
            write_atomically(kept, (digest + "\n").encode(), 0o600)
        except OSError:
            pass
    return digest
