"""data-expectations through real pre-commit: the hook repository is this checkout,
the project a throwaway git repository whose loader loses its normalization."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from gitrepo import commit_all, git, init_git_repo

from mlsmoke.cli import main as cli_main

HERE = Path(__file__).parent
LOADER = "import expect_loaders\n\n\ndef train():\n    return expect_loaders.{call}\n"


@pytest.mark.e2e
def test_a_lost_normalization_is_blocked_by_the_hook(
    hook_repo, run_pre_commit, tmp_path, monkeypatch, capsys
):
    project = init_git_repo(tmp_path / "project")
    shutil.copy(HERE / "expect_loaders.py", project)
    (project / "data.py").write_text(LOADER.format(call="images()"))
    (project / "pyproject.toml").write_text(
        '[tool.mlsmoke.expect]\nbatch = "data:train"\n'
    )
    (project / ".gitignore").write_text(".mlsmoke/\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n"
        "  hooks:\n  - id: data-expectations\n"
    )
    monkeypatch.chdir(project)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    assert cli_main(["expect", "--record"]) == 0
    capsys.readouterr()
    commit_all(project)
    env = {"MLSMOKE_PYTHON": sys.executable}

    passed = run_pre_commit(project, "run", "--all-files", env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "data expectations" in passed.stdout and "Passed" in passed.stdout

    (project / "data.py").write_text(LOADER.format(call="images(normalize=0)"))
    git(project, "add", "data.py")
    blocked = run_pre_commit(project, "run", env=env)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "likely: normalization removed: values ~255x" in blocked.stdout
    assert "mlsmoke expect --record shows the diff" in blocked.stdout
    assert git(project, "status", "--porcelain") == "M  data.py\n"  # suite untouched
