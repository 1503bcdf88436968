"""The files a training script writes inside the project while the gate runs it: a
checkpoint, a log, a config dump left in the working tree at every commit, where the
gate's ``{out_dir}`` was meant to take them."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Directories that are not the project's own output: VCS, caches, environments.
SKIPPED = {".git", ".hg", ".mlsmoke", "__pycache__", ".venv", "venv", "node_modules",
           ".mypy_cache", ".pytest_cache", ".tox"}  # fmt: skip
# A project tree larger than this many entries is not walked: the cost would show.
WALK_LIMIT = 20000


@contextmanager
def recording_writes(root: Path, written: list[str]) -> Iterator[None]:
    """Fill ``written`` with the files under ``root`` modified while the body ran."""
    started = time.time()
    try:
        yield
    finally:
        written[:] = files_modified_since(root, started)


def files_modified_since(root: Path, since: float) -> list[str]:
    """Files under ``root`` (relative, with /) whose mtime is ``since`` or later."""
    found: list[str] = []
    seen = 0
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED)
        for name in sorted(files):
            seen += 1
            if seen > WALK_LIMIT:
                return found
            path = os.path.join(directory, name)
            try:
                modified = os.stat(path).st_mtime
            except OSError:
                continue
            if modified >= since and not name.endswith(".pyc"):
                found.append(Path(path).relative_to(root).as_posix())
    return found
