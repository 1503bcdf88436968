"""The project's own import graph: which of its files a gate's factories imported.

Read in the worker after the gate ran, from ``sys.modules``: every module whose file
lies under the project root, except virtualenvs, installed packages and mlsmoke itself.
The cache records these files with their content, so a change to any of them
invalidates a pass even when ``watch`` does not name them.

A file is recorded by the path it was imported through: a package that is a symlink
in the project (a monorepo's shared code) is the project's code, though its files
resolve to elsewhere; the cache reads them through the link.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import mlsmoke

_INSTALLED = {"site-packages", "dist-packages"}


def project_modules(
    root: Path, modules: Iterable[ModuleType] | None = None
) -> list[str]:
    """The files (relative to ``root``, '/'-separated, sorted) of the modules loaded
    from the project: of ``modules``, by default all of ``sys.modules``."""
    top = os.path.realpath(root)
    outside = [os.path.realpath(os.path.dirname(mlsmoke.__file__))]
    # A virtualenv inside the project is not the project (a prefix above it is moot).
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    outside += [p for p in prefixes if p != top and _under(p, top)]
    real_path = _RealPaths()
    found = set()
    for module in list(sys.modules.values()) if modules is None else modules:
        name = getattr(module, "__file__", None)
        if not isinstance(name, str) or not os.path.isabs(name):
            continue  # built-in, frozen, a namespace package, or a made-up name
        imported, real = os.path.normpath(name), real_path(name)
        for path in (imported, real):
            if _is_project_file(path, top, outside, real) and os.path.isfile(real):
                found.add(Path(path[len(top) :].lstrip(os.sep)).as_posix())
                break
    return sorted(found)


class _RealPaths:
    """``os.path.realpath`` of module files, each directory resolved once from its
    parent's resolution: with torch loaded, two thousand files lie in a few hundred
    directories, most of them below the same ten."""

    def __init__(self) -> None:
        self._directories: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        directory, base = os.path.split(name)
        return self._joined(self._directory(directory), base)

    def _directory(self, directory: str) -> str:
        real = self._directories.get(directory)
        if real is None:
            parent, base = os.path.split(directory)
            if parent == directory or base in ("", ".", ".."):
                real = os.path.realpath(directory)
            else:
                real = self._joined(self._directory(parent), base)
            self._directories[directory] = real
        return real

    @staticmethod
    def _joined(real_directory: str, base: str) -> str:
        joined = os.path.join(real_directory, base)
        return os.path.realpath(joined) if os.path.islink(joined) else joined


def _under(path: str, directory: str) -> bool:
    """Whether normalized ``path`` is ``directory`` or lies under it, by name."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _is_project_file(path: str, top: str, outside: list[str], real: str) -> bool:
    """Whether ``path`` (a name of the file ``real``) is the project's own file."""
    if not _under(path, top):
        return False
    for name in (path, real):  # a venv or site-packages linked in is still not ours
        if any(f"{os.sep}{part}{os.sep}" in name for part in _INSTALLED):
            return False
        if any(_under(name, directory) for directory in outside):
            return False
    return True
