"""Fixtures shared by the end-to-end tests: this checkout as a hook repository, and
real pre-commit runs in throwaway git repositories."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """This checkout, working tree included, committed to a temporary clone.

    pre-commit cannot clone from GitHub on the test machines, so the end-to-end tests
    point ``repo:`` at this local repository instead.
    """
    dest = tmp_path_factory.mktemp("mlsmoke-hook-repo")
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


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache per test session, so each hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def run_pre_commit(pre_commit_home: Path):
    """Run real pre-commit in a repository; returns the CompletedProcess."""

    def run(
        repo: Path, *args: str, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args],
            cwd=repo,
            env={
                **os.environ,
                **GIT_IDENTITY,
                "PRE_COMMIT_HOME": str(pre_commit_home),
                "PRE_COMMIT_COLOR": "never",
                **(env or {}),
            },
            capture_output=True,
            text=True,
        )

    return run
