"""Throwaway git repositories for the end-to-end tests, and this checkout as one.

A plain module, not conftest.py: test files import it by name, and a conftest of another
test directory can never shadow it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "mlsmoke tests",
    "GIT_AUTHOR_EMAIL": "tests@mlsmoke.invalid",
    "GIT_COMMITTER_NAME": "mlsmoke tests",
    "GIT_COMMITTER_EMAIL": "tests@mlsmoke.invalid",
}


@dataclass(frozen=True)
class HookRepo:
    """A git repository holding this checkout, usable as a pre-commit ``repo:``."""

    path: Path
    rev: str


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    completed = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_IDENTITY, **(env or {})},
        check=True,
        capture_output=True,
        text=True,
    )
    return completed.stdout


def init_git_repo(path: Path) -> Path:
    """``path`` as a fresh git repository with a deterministic identity."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit_all(path: Path, message: str = "commit") -> str:
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "--no-verify", "-m", message)
    return git(path, "rev-parse", "HEAD").strip()


def snapshot_checkout(dest: Path) -> HookRepo:
    """This checkout, working tree included, committed to a new repository at ``dest``.

    pre-commit cannot clone from GitHub on the test machines, so the end-to-end tests
    point ``repo:`` at this local repository instead.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    init_git_repo(dest)
    return HookRepo(dest, commit_all(dest, "mlsmoke under test"))
