"""Which of the files named on the command line the hook runs."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import PurePath

PROMPT = b">>>"
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


def has_examples(content: bytes) -> bool:
    """The fast path: a file without ``>>>`` is skipped without being imported."""
    return PROMPT in content
