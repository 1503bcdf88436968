"""Which module a Python file is, seen from the repository root.

Used on both sides of the hook, so it needs only the standard library. A file's
module name follows its chain of ``__init__.py`` packages. Directories between that
chain and the source root (the project root, a ``src`` directory, or a subproject with
its own pyproject.toml) are namespace packages.
"""

from __future__ import annotations

import keyword
import os
from pathlib import Path
from typing import NamedTuple

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
SOURCE_DIR_NAMES = ("src",)


class ModuleLocation(NamedTuple):
    """How to import a file: ``name`` is importable once ``search_root`` is on sys.path.

    ``script_dir`` is set when the file sits in a namespace directory (such as
    ``scripts/``): scripts there import their siblings by bare name, so that directory
    goes on sys.path too. ``name`` is empty when some part is not an identifier.
    """

    name: str
    search_root: Path
    script_dir: Path | None


def locate_module(path: Path, root: Path) -> ModuleLocation:
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    parts = [] if path.name == "__init__.py" else [_stem(path)]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        parts.insert(0, directory.name)
        directory = directory.parent
    source_root = find_source_root(directory, root)
    namespace = list(directory.relative_to(source_root).parts)
    name_parts = namespace + parts
    name = ".".join(name_parts) if all(map(_is_identifier, name_parts)) else ""
    return ModuleLocation(name, source_root, directory if namespace else None)


def find_source_root(directory: Path, root: Path) -> Path:
    """The nearest sys.path entry at or above ``directory``, never above ``root``."""
    if directory != root and root not in directory.parents:
        return directory
    for candidate in (directory, *directory.parents):
        if candidate == root or _is_source_root(candidate):
            return candidate
    return root  # pragma: no cover - the loop always reaches root


def project_source_roots(root: Path) -> list[Path]:
    """The sys.path entries every file of the project may import from."""
    return [root / name for name in SOURCE_DIR_NAMES if (root / name).is_dir()] + [root]


def is_local_module(top_level: str, search_roots: list[Path]) -> bool:
    """Whether ``top_level`` is a module or package in one of ``search_roots``."""
    return any(
        (directory / f"{top_level}.py").is_file()
        or _holds_python(directory / top_level)
        for directory in search_roots
    )


def _holds_python(directory: Path) -> bool:
    """A package, or a namespace directory of Python files: not ``wandb/`` run data."""
    if (directory / "__init__.py").is_file():
        return True
    return directory.is_dir() and any(directory.glob("*.py"))


def _is_source_root(directory: Path) -> bool:
    if directory.name in SOURCE_DIR_NAMES:
        return True
    return any((directory / marker).is_file() for marker in PROJECT_MARKERS)


def _stem(path: Path) -> str:
    return path.stem if path.suffix in (".py", ".pyw") else path.name


def _is_identifier(part: str) -> bool:
    return part.isidentifier() and not keyword.iskeyword(part)
