"""What a worker's imports depend on, and whether it still holds.

A snapshot taken once the worker has imported torch and the dependencies: the stat of
every file it imported, of every import directory outside the project (an installed,
upgraded or removed package changes its directory: a new dist-info), and of the
interpreter. A job is forked only while the snapshot holds; otherwise the worker retires
and the next hook starts a new one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[int, int, int]  # mtime_ns, size, inode


def stamp(path: str) -> Stamp | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size, status.st_ino


def loaded_files() -> list[str]:
    files = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isabs(path):
            files.append(path)
    return files


def inside(path: str, directory: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(directory)
    except OSError:
        return False


def import_directories(root: Path) -> list[str]:
    """sys.path's directories that packages are installed in: the project's own
    directories are left out (an edit there is the next job's business), except an
    environment inside the project (``.venv``)."""
    prefix = Path(sys.prefix).resolve()
    found = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        if inside(entry, root) and not inside(entry, prefix):
            continue
        found.append(entry)
    return found


def snapshot(paths: Iterable[str]) -> dict[str, Stamp | None]:
    return {path: stamp(path) for path in paths}


def first_change(taken: dict[str, Stamp | None]) -> str | None:
    """The first path whose stat differs from the snapshot; None when none does."""
    for path, before in taken.items():
        if stamp(path) != before:
            return path
    return None


def project_modules_loaded(root: Path) -> list[str]:
    """The modules whose file is in the project but not in an environment in it."""
    inside_root = _prefixes(root)
    inside_environment = _prefixes(Path(sys.prefix))
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not os.path.isabs(path):
            continue
        if path.startswith(inside_root) and not path.startswith(inside_environment):
            found.append(name)
    return found


def _prefixes(directory: Path) -> tuple[str, ...]:
    """What the paths inside ``directory`` start with, as given and resolved."""
    return tuple({str(directory) + os.sep, os.path.realpath(directory) + os.sep})
