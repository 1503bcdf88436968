"""Fixtures shared by the end-to-end tests: this checkout as a hook repository, and
real pre-commit runs in throwaway git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from gitrepo import GIT_IDENTITY, HookRepo, snapshot_checkout
from mlsmoke.overfit.verdict.internal_errors import VARIABLE as INTERNAL_ERRORS


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """This checkout committed to a temporary repository, for ``repo:``."""
    return snapshot_checkout(tmp_path_factory.mktemp("mlsmoke-hook-repo"))


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


@pytest.fixture(autouse=True)
def _hooks_start_their_own_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite runs the hooks as they run with the warm worker off; tests/warm and
    the worker's fault tests turn it on for their own runs, with a directory each."""
    monkeypatch.setenv("MLSMOKE_WORKER", "0")


@pytest.fixture(autouse=True)
def _internal_errors_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    """A diagnosis that raises from mlsmoke's own code fails the test that ran it,
    in this process and in every hook and worker it starts, instead of letting the
    registry answer with the next diagnosis (``verdict/internal_errors.py``)."""
    monkeypatch.setenv(INTERNAL_ERRORS, "raise")
