"""Which files the hook runs, and which third-party modules their examples need.

Pure decisions on paths and file contents; the hook reads the files and passes them in.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from collections.abc import Iterable
from pathlib import Path, PurePath

from mlsmoke.doctests.documents import document_kind
from mlsmoke.doctests.modules import is_local_module, locate_module

PROMPT = b">>>"
SKIPPED_SUFFIXES = (".pyi",)  # stubs never run

_EXAMPLE_IMPORT = re.compile(
    r"^\s*>>>\s+(?:import\s+(?P<imported>[\w.]+)|from\s+(?P<source>[\w.]+)\s+import\b)",
    re.MULTILINE,
)
_NOT_THIRD_PARTY = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}


def is_excluded(relative: PurePath, globs: Iterable[str]) -> bool:
    """Whether the project-relative path, or a directory above it, matches a glob."""
    candidates = [relative.as_posix()] + [
        parent.as_posix() for parent in relative.parents
    ]
    return any(
        fnmatch.fnmatchcase(candidate, glob.rstrip("/"))
        for glob in globs
        for candidate in candidates
        if candidate != "."
    )


def is_runnable(filename: str) -> bool:
    return not filename.lower().endswith(SKIPPED_SUFFIXES)


def has_examples(content: bytes) -> bool:
    """The fast path: a file without ``>>>`` is skipped without being imported."""
    return PROMPT in content


def required_modules(files: dict[Path, str], root: Path) -> list[str]:
    """The third-party modules the files import at module level or in examples.

    ``files`` maps each path to its text. Imports under ``try``, ``if`` or in functions
    are optional, so they are left out, as are the project's own modules.
    """
    search_roots = [root / "src", root]
    names: set[str] = set()
    for path, text in files.items():
        if document_kind(path.name) == "python":
            location = locate_module(path, root)
            search_roots += [location.search_root]
            search_roots += [location.script_dir] if location.script_dir else []
            names.update(module_level_imports(text))
        names.update(example_imports(text))
    return sorted(
        name
        for name in names
        if name not in _NOT_THIRD_PARTY and not is_local_module(name, search_roots)
    )


def module_level_imports(source: str) -> set[str]:
    """Top-level names of the absolute imports directly in a module's body."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return set()  # the runner reports it when importing the file
    names = set()
    for node in body:
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def example_imports(text: str) -> set[str]:
    """Top-level names imported by ``>>>`` lines, except those skipped with +SKIP."""
    names = set()
    for match in _EXAMPLE_IMPORT.finditer(text):
        line_end = text.find("\n", match.end())
        if "+SKIP" in text[match.end() : None if line_end < 0 else line_end]:
            continue
        module = match["imported"] or match["source"]
        names.add(module.partition(".")[0])
    return names
