"""A legacy repository adopted with ``mlsmoke init``, and real pre-commit in it: the
init tests' helpers and fixtures (registered by this directory's conftest.py).

A plain module, not conftest.py: test files import it by name, and a conftest of another
test directory can never shadow it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from legacy_repo import write_legacy_repo

from gitrepo import ROOT, commit_all, init_git_repo

_spec = importlib.util.spec_from_file_location(
    "offline_config", ROOT / "tests" / "template" / "offline_config.py"
)
offline_config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(offline_config)

# The doctest hook runs the examples in the project's interpreter: this one, which has
# torch and lightning, as a project's .venv would.
PROJECT_ENV = {"MLSMOKE_PYTHON": sys.executable, "PRE_COMMIT_COLOR": "never"}


def mlsmoke(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mlsmoke", *args],
        cwd=repo,
        env={**os.environ, **PROJECT_ENV},
        capture_output=True,
        text=True,
    )


@dataclass(frozen=True)
class Adopted:
    path: Path
    init_output: str
    offline_config: Path  # the same config, its hooks from local sources


def adopt(repo: Path, hook_repo, *init_args: str) -> Adopted:
    init_git_repo(repo)
    commit_all(repo, "legacy")
    ran = mlsmoke(repo, "init", *init_args)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    commit_all(repo, "mlsmoke init")
    offline = repo.parent / f"{repo.name}-offline.yaml"
    shutil.copyfile(repo / ".pre-commit-config.yaml", offline)
    offline_config.rewrite_config(offline, hook_repo.path, hook_repo.rev)
    return Adopted(repo, ran.stdout, offline)


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory, hook_repo) -> Adopted:
    repo = write_legacy_repo(tmp_path_factory.mktemp("legacy") / "repo")
    return adopt(repo, hook_repo)


@pytest.fixture
def adopted_copy(adopted: Adopted, tmp_path: Path) -> Adopted:
    """A copy of the adopted repository that a test may change."""
    copy = tmp_path / "repo"
    shutil.copytree(adopted.path, copy, symlinks=True)
    offline = tmp_path / "offline.yaml"
    shutil.copyfile(adopted.offline_config, offline)
    return Adopted(copy, adopted.init_output, offline)


PreCommit = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def pre_commit(run_pre_commit) -> PreCommit:
    """Real pre-commit in an adopted repository, with its offline config."""

    def run(repo: Adopted, *args: str) -> subprocess.CompletedProcess[str]:
        return run_pre_commit(
            repo.path,
            "run",
            "--config",
            str(repo.offline_config),
            *args,
            env=PROJECT_ENV,
        )

    return run
