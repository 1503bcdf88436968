"""Which third-party modules the files under test need, found without importing them.

The hook asks for an interpreter that can import these. They are the absolute imports
at module level, and the imports of ``>>>`` lines, of the files and of the project's
modules they import in turn. Imports under ``try``, ``if`` or inside functions are
optional and left out, as are ``+SKIP`` examples, the standard library and the
project's own modules.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from mlsmoke.doctests.documents import document_kind
from mlsmoke.doctests.modules import (
    is_local_module,
    locate_module,
    project_source_roots,
)

# A bound on the project modules followed, for huge monorepos.
MAX_FOLLOWED_FILES = 2000

_EXAMPLE_IMPORT = re.compile(
    r"^[ \t]*>>>[ \t]+(?:import[ \t]+(?P<imported>[\w.]+)|from[ \t]+(?P<source>[\w.]+)"
    r"[ \t]+import\b)(?P<rest>.*)$",
    re.MULTILINE,
)
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_NOT_THIRD_PARTY = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}


def required_modules(files: dict[Path, str], root: Path) -> dict[str, Path]:
    """The top-level third-party modules needed, each with a file that imports it.

    ``files`` maps the paths to their text.
    """
    search_roots = _search_roots(list(files), root)
    third_party: dict[str, Path] = {}
    # Breadth first: a module is credited to a named file before a file it imports.
    queue, seen = deque(files.items()), set(files)
    while queue and len(seen) < MAX_FOLLOWED_FILES:
        path, text = queue.popleft()
        for dotted in imported_names(path, text, root):
            top_level = dotted.partition(".")[0]
            if top_level in _NOT_THIRD_PARTY:
                continue
            local = project_files(dotted, search_roots)
            if local is None:
                third_party.setdefault(top_level, path)
                continue
            for found in set(local) - seen:
                seen.add(found)
                queue.append((found, _read_text(found)))
    return dict(sorted(third_party.items()))


def imported_names(path: Path, text: str, root: Path) -> Iterator[str]:
    """The absolute dotted names the file imports, relative imports resolved."""
    if document_kind(path.name) != "python":
        yield from example_imports(text)
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return  # the runner reports it when importing the file
    yield from module_level_imports(tree, _package_parts(path, root))
    for docstring in docstrings(tree):
        yield from example_imports(docstring)


def module_level_imports(tree: ast.Module, package: list[str] | None) -> Iterator[str]:
    """Dotted names imported directly in the module's body.

    ``package`` is the importing module's package, to resolve relative imports; ``from
    a import b`` yields ``a`` and ``a.b``, since ``b`` may be a submodule.
    """
    for node in tree.body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            if base:
                yield base
                yield from (f"{base}.{alias.name}" for alias in node.names)


def docstrings(tree: ast.Module) -> Iterator[str]:
    """The docstrings doctest reads: the module's, its classes' and functions'.

    Not other strings: a test's data can hold ``>>>`` lines that never run.
    """
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield docstring


def example_imports(text: str) -> Iterator[str]:
    """Absolute names imported by ``>>>`` lines, except those skipped with +SKIP."""
    for match in _EXAMPLE_IMPORT.finditer(text):
        name = match["imported"] or match["source"]
        if "+SKIP" not in match["rest"] and not name.startswith("."):
            yield name


def project_files(dotted: str, search_roots: list[Path]) -> list[Path] | None:
    """The project's files that importing ``dotted`` runs; None when it is not local."""
    first, *rest = dotted.split(".")
    for search_root in search_roots:
        if not is_local_module(first, [search_root]):
            continue
        found, directory = [], search_root
        for part in [first, *rest]:
            if (directory / part / "__init__.py").is_file():
                found.append(directory / part / "__init__.py")
            elif (directory / f"{part}.py").is_file():
                found.append(directory / f"{part}.py")
                break
            elif not (directory / part).is_dir():
                break
            directory = directory / part
        return found
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""  # unreadable here, so it fails loudly in the runner instead


def _search_roots(paths: list[Path], root: Path) -> list[Path]:
    roots = project_source_roots(root)
    for path in paths:
        if document_kind(path.name) == "python":
            location = locate_module(path, root)
            roots += [location.search_root]
            roots += [location.script_dir] if location.script_dir else []
    return list(dict.fromkeys(roots))


def _package_parts(path: Path, root: Path) -> list[str] | None:
    name = locate_module(path, root).name
    if not name:
        return None
    parts = name.split(".")
    return parts if path.name == "__init__.py" else parts[:-1]


def _absolute(module: str, level: int, package: list[str] | None) -> str:
    if level == 0:
        return module
    if package is None or level > len(package):
        return ""
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))
