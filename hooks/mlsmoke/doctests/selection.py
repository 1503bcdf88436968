"""Which of the files named on the command line the hook runs."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable
from pathlib import PurePath

from mlsmoke.doctests.documents import document_kind, example_text

PROMPT = b">>>"
# doctest's own rule: an example is a line whose first non-blank text is ``>>>``.
_EXAMPLE_LINE = re.compile(r"^[ \t]*>>>", re.MULTILINE)
SKIPPED_SUFFIXES = (".pyi",)  # stubs never run


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


def has_examples(content: bytes, filename: str = "") -> bool:
    """Whether the file holds an example doctest (and pytest) would run: in a
    Python file, a ``>>>`` line of a module, class or function docstring; in a
    document, a ``>>>`` line (Markdown: inside a Python fence). A ``# >>>`` comment
    or a string that is not a docstring is not an example. A file without ``>>>``
    is skipped at once, unparsed; one that does not parse is kept, for the runner
    to report."""
    if PROMPT not in content:
        return False
    text = content.decode("utf-8", "replace")
    kind = document_kind(filename)
    if kind != "python":
        return bool(_EXAMPLE_LINE.search(example_text(text, kind)))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return True
    return any(_EXAMPLE_LINE.search(doc) for doc in docstrings(tree))


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstrings(tree: ast.Module) -> Iterable[str]:
    """The docstrings doctest reads: the module's, its classes' and functions'."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield docstring
