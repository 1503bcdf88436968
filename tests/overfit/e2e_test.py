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
from gitrepo import commit_all, init_git_repo

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
