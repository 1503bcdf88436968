"""The optional ``model-regression`` hook through real pre-commit, at the pre-push
stage: it checks the configured checkpoint when it changed since its last pass, and
blocks the push when a suite regressed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from gitrepo import commit_all, init_git_repo

import suites_project
from suites_cli import Project


@pytest.mark.e2e
def test_model_regression_at_pre_push(
    recorded: Project, hook_repo, run_pre_commit, tmp_path: Path
) -> None:
    project = init_git_repo(tmp_path / "project")
    for name in ("suites_project.py", "pyproject.toml", "blobs.pt", "suites"):
        source = recorded.root / name
        copy = shutil.copytree if source.is_dir() else shutil.copy
        copy(source, project / name)
    (project / ".gitignore").write_text("checkpoints/\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n"
        "  hooks:\n  - id: model-regression\n"
    )
    commit_all(project)
    env = {"MLSMOKE_PYTHON": sys.executable}

    def push_hooks():
        return run_pre_commit(project, "run", "--hook-stage", "pre-push", "-v", env=env)

    nothing = push_hooks()
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
    assert "no checkpoint at checkpoints/model.pt; nothing to check" in nothing.stdout

    (project / "checkpoints").mkdir()
    shutil.copy(recorded.checkpoint, project / "checkpoints" / "model.pt")
    held = push_hooks()
    assert held.returncode == 0, held.stdout + held.stderr
    assert "suites check held" in held.stdout

    again = push_hooks()
    assert again.returncode == 0
    assert "checkpoints/model.pt passed before, unchanged" in again.stdout

    checkpoint = project / "checkpoints" / "model.pt"
    suites_project.without_class(checkpoint, 1, checkpoint)
    blocked = push_hooks()
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "suites check FAILED" in blocked.stdout
    assert "slice-class-1" in blocked.stdout and "flipped from right to wrong" in (
        blocked.stdout
    )
