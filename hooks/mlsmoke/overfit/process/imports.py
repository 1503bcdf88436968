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
    root = root.resolve()
    outside = [Path(mlsmoke.__file__).resolve().parent]
    # A virtualenv inside the project is not the project (a prefix above it is moot).
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
    outside += [p for p in prefixes if p != root and p.is_relative_to(root)]
    found = set()
    for module in list(sys.modules.values()) if modules is None else modules:
        name = getattr(module, "__file__", None)
        if not isinstance(name, str) or not Path(name).is_absolute():
            continue  # built-in, frozen, a namespace package, or a made-up name
        imported, real = Path(os.path.normpath(name)), Path(name).resolve()
        for path in (imported, real):
            if real.is_file() and _is_project_file(path, root, outside, real):
                found.add(path.relative_to(root).as_posix())
                break
    return sorted(found)


def _is_project_file(path: Path, root: Path, outside: list[Path], real: Path) -> bool:
    """Whether ``path`` (a name of the file ``real``) is the project's own file."""
    if not path.is_relative_to(root):
        return False
    for name in (path, real):  # a venv or site-packages linked in is still not ours
        if _INSTALLED & set(name.parts):
            return False
        if any(name.is_relative_to(directory) for directory in outside):
            return False
    return True
