"""Importing the files whose examples run: a Python file under its real module name
when it can have it (relative imports and package state work, ``__main__`` blocks do
not run), any other under a name no real module has, with every file's source root
first on ``sys.path``.

Standard library only: it runs inside the project's interpreter.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from mlsmoke.doctests.documents import document_kind
from mlsmoke.doctests.failures import FileFailureError, import_failure
from mlsmoke.doctests.modules import locate_module, project_source_roots
from mlsmoke.doctests.results import FileFailure


def import_file(path: Path, root: Path) -> ModuleType:
    """The file's module, imported under its real name when it can have it."""
    real_name = locate_module(path, root).name
    # A top-level json.py loses its name to the json module this runner already uses.
    by_name = bool(real_name) and is_file_of(sys.modules.get(real_name), path, True)
    name = real_name if by_name else script_name(path)
    try:
        module = importlib.import_module(name) if by_name else load(name, path)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: B036 - a module may raise SystemExit
        raise FileFailureError(import_failure(name, error, root)) from None
    if not is_file_of(module, path, False):
        found = getattr(module, "__file__", None) or "a namespace package"
        detail = f"{name} is {found}, not this file"
        raise FileFailureError(FileFailure(f"cannot import {name}", detail, ""))
    return module


def is_file_of(module: ModuleType | None, path: Path, default: bool) -> bool:
    """Whether ``module`` was loaded from ``path``; ``default`` when there is none."""
    if module is None:
        return default
    found = getattr(module, "__file__", None)
    try:
        return bool(found) and os.path.samefile(found, path)
    except OSError:  # a module whose file is gone
        return False


def load(name: str, path: Path) -> ModuleType:
    """Import a file whose name is no module name (``my-script.py``, ``bin/tool``)."""
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def script_name(path: Path) -> str:
    stem = path.name[: -len(path.suffix)] if path.suffix == ".py" else path.name
    cleaned = "".join(c if c.isalnum() else "_" for c in stem)
    return f"_mlsmoke_doctest_{cleaned}"  # unique: never a real module's name


def extend_sys_path(files: list[tuple[str, Path]], root: Path) -> None:
    """Put every file's source root first on sys.path, and script dirs last."""
    search_roots, script_dirs = [], []
    for _, path in files:
        if document_kind(path.name) == "python":
            location = locate_module(path, root)
            search_roots.append(str(location.search_root))
            if location.script_dir is not None:
                script_dirs.append(str(location.script_dir))
    search_roots += [str(directory) for directory in project_source_roots(root)]
    for directory in reversed(list(dict.fromkeys(search_roots))):
        if directory in sys.path:
            sys.path.remove(directory)
        sys.path.insert(0, directory)
    sys.path += [d for d in dict.fromkeys(script_dirs) if d not in sys.path]
