"""overfit-batch through real pre-commit: the hook environment has no torch, the
project's .venv has it, and mlsmoke finds it there without being installed in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from gitrepo import GIT_IDENTITY, commit_all, git, init_git_repo

HERE = Path(__file__).parent
GATE = """\
[tool.mlsmoke.overfit]
model = "overfit_models:MLP"
batch = "overfit_models:mlp_batch"
loss = "overfit_models:mlp_loss"
"""


@pytest.fixture(scope="session")
def torch_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real virtual environment where torch imports and mlsmoke does not.

    Installing torch would take a minute and a GB per session; the venv borrows this
    interpreter's site-packages through a .pth path line instead. Path lines do not run
    the .pth files they point at, so this checkout's editable mlsmoke stays out.
    """
    venv = tmp_path_factory.mktemp("project-venv") / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run(
        [str(python), "-c", ask], check=True, capture_output=True, text=True
    ).stdout.strip()
    (Path(purelib) / "borrowed_torch.pth").write_text(sysconfig.get_paths()["purelib"])
    return venv


def python_can_import(python: Path, module: str) -> bool:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [str(python), "-c", f"import {module}"]
    return subprocess.run(command, capture_output=True, env=env).returncode == 0


@pytest.mark.e2e
def test_overfit_batch_under_pre_commit(
    hook_repo, run_pre_commit, torch_venv, tmp_path
):
    project = init_git_repo(tmp_path / "project")
    shutil.copy(HERE / "overfit_models.py", project)
    (project / "pyproject.toml").write_text(GATE)
    (project / ".venv").symlink_to(torch_venv, target_is_directory=True)
    (project / ".gitignore").write_text(".venv\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n"
        "  hooks:\n  - id: overfit-batch\n"
    )
    commit_all(project)
    python = project / ".venv" / "bin" / "python"
    assert python_can_import(python, "torch") and not python_can_import(
        python, "mlsmoke"
    )
    # PATH holds no interpreter with torch: mlsmoke must find the project's .venv.
    env = {"PATH": "/usr/bin:/bin", "MLSMOKE_PYTHON": "", "PYTHONPATH": ""}

    first = run_pre_commit(
        project, "run", "overfit-batch", "--all-files", "-v", env=env
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert "overfit default: PASS memorized" in first.stdout
    assert "(cached)" not in first.stdout
    assert (project / ".mlsmoke" / ".gitignore").is_file()

    cached = run_pre_commit(
        project, "run", "overfit-batch", "--all-files", "-v", env=env
    )
    assert cached.returncode == 0 and "PASS memorized (cached)" in cached.stdout

    (project / "pyproject.toml").write_text(GATE + "lr = 1e-7\nmax-steps = 5\n")
    commit_all(project)
    failed = run_pre_commit(project, "run", "overfit-batch", "--all-files", env=env)
    assert failed.returncode == 1
    assert "overfit default: FAIL" in failed.stdout and "Traceback" not in failed.stdout


PROJECT = """\
[project]
name = "demo"
description = "one"

"""


def git_commit(project: Path, message: str, env: dict[str, str]):
    """``git commit`` of what is staged, through the pre-commit hook git runs; its
    output and the hooks' in ``stdout``."""
    return subprocess.run(
        ["git", "commit", "-m", message],
        cwd=project,
        env={**os.environ, **GIT_IDENTITY, "PRE_COMMIT_COLOR": "never", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # git shows the hook's output on stderr
        text=True,
    )


@pytest.mark.e2e
def test_a_config_edit_is_checked_by_its_own_commit(
    hook_repo, run_pre_commit, pre_commit_home, torch_venv, tmp_path
):
    """pyproject.toml committed alone runs the hooks that read it: a misspelt key is
    blocked by that commit, naming the key; an unrelated edit is a cached pass; a
    change of the gate's settings trains again."""
    project = init_git_repo(tmp_path / "project")
    shutil.copy(HERE / "overfit_models.py", project)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(PROJECT + GATE)
    (project / ".venv").symlink_to(torch_venv, target_is_directory=True)
    (project / ".gitignore").write_text(".venv\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n  hooks:\n"
        "  - id: bash-strict-mode\n  - id: doctest\n"
        "  - id: overfit-batch\n    verbose: true\n"
    )
    commit_all(project)
    env = {
        "PATH": "/usr/bin:/bin",
        "MLSMOKE_PYTHON": "",
        "PYTHONPATH": "",
        "PRE_COMMIT_HOME": str(pre_commit_home),
    }
    assert run_pre_commit(project, "install").returncode == 0
    warm = run_pre_commit(project, "run", "overfit-batch", "--all-files", env=env)
    assert warm.returncode == 0, warm.stdout + warm.stderr

    pyproject.write_text(pyproject.read_text().replace('"one"', '"two"'))
    git(project, "add", "pyproject.toml")
    described = git_commit(project, "describe", env)
    assert described.returncode == 0, described.stdout
    assert "overfit default: PASS memorized (cached)" in described.stdout
    assert "bash strict mode" in described.stdout  # ran, on pyproject.toml alone

    head = git(project, "rev-parse", "HEAD")
    pyproject.write_text(pyproject.read_text() + "max_steps = 500\n")
    git(project, "add", "pyproject.toml")
    typo = git_commit(project, "a typo", env)
    assert typo.returncode != 0
    assert "tool.mlsmoke.overfit.max_steps: unknown key" in typo.stdout
    assert "Traceback" not in typo.stdout
    assert git(project, "rev-parse", "HEAD") == head

    pyproject.write_text(pyproject.read_text().replace("max_steps", "max-steps"))
    git(project, "add", "pyproject.toml")
    fixed = git_commit(project, "the gate's steps", env)
    assert fixed.returncode == 0, fixed.stdout
    assert "overfit default: PASS memorized" in fixed.stdout
    assert "(cached)" not in fixed.stdout  # its settings changed: it trained again

    (project / "pyproject.toml").write_text(
        pyproject.read_text() + "\n[tool.mlsmoke.doctest]\ntimout = 5\n"
    )
    git(project, "add", "pyproject.toml")
    doctest_typo = git_commit(project, "another typo", env)
    assert doctest_typo.returncode != 0
    assert "tool.mlsmoke.doctest.timout: unknown key" in doctest_typo.stdout
