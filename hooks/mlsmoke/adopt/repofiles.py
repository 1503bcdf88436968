"""The files pre-commit would give the hooks: git's tracked files, with their tags."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mlsmoke.errors import EnvironmentProblem, UsageError
from mlsmoke.install_hint import install_hint


@dataclass(frozen=True)
class RepoFile:
    path: str  # relative, with /
    tags: frozenset[str]


def _identify() -> object:
    try:
        from identify import identify
    except ImportError:
        raise EnvironmentProblem(
            "files are sorted the way pre-commit does, with identify, which "
            f"comes with pre-commit: {install_hint('init')}"
        ) from None
    return identify


def tracked_files(root: Path, exclude: str | None = None) -> list[RepoFile]:
    """``git ls-files`` of ``root``: regular files, tagged, minus ``exclude``."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
        ).stdout.decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        raise EnvironmentProblem("git is needed and is not on PATH")
    except subprocess.CalledProcessError:
        raise UsageError(
            f"{root}: not a git repository; pre-commit works in git repositories: "
            "git init, then mlsmoke init"
        ) from None
    identify = _identify()
    pattern = re.compile(exclude) if exclude and exclude != "^$" else None
    files = []
    for name in filter(None, listed.split("\0")):
        full = root / name
        if os.path.islink(full) or not full.is_file():
            continue
        if pattern and pattern.search(name):
            continue
        files.append(RepoFile(name, frozenset(identify.tags_from_path(str(full)))))
    return files


def select(
    files: Iterable[RepoFile],
    types: Iterable[str] = (),
    types_or: Iterable[str] = (),
    exclude_types: Iterable[str] = (),
) -> list[str]:
    """pre-commit's type filter: every of ``types``, one of ``types_or``, none of
    ``exclude_types``."""
    types, types_or, exclude_types = set(types), set(types_or), set(exclude_types)
    return [
        file.path
        for file in files
        if types <= file.tags
        and (not types_or or types_or & file.tags)
        and not exclude_types & file.tags
    ]
