"""Where the project is: the directory of its pyproject.toml, and whether a file a
hook is given is that pyproject.toml. Apart from :mod:`mlsmoke.config` so that a hook
finds both without importing a TOML parser."""

from __future__ import annotations

import os
from pathlib import Path

PYPROJECT = "pyproject.toml"


def find_project_root(start: Path | None = None) -> Path:
    """The nearest directory from ``start`` up with a pyproject.toml, else ``start``."""
    start = (start or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        if (directory / PYPROJECT).is_file():
            return directory
        if (directory / ".git").exists():
            break
    return start


def is_project_config(name: str, root: Path) -> bool:
    """Whether ``name``, a path as a hook is given it, is ``root``'s pyproject.toml.

    The hooks are also run on it, so that a commit editing their tables is checked by
    its own run: loading the settings validates them, and the file is then no script
    or document to check."""
    return Path(os.path.abspath(name)) == root / PYPROJECT
