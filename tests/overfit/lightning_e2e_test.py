"""overfit-batch through real pre-commit on a project that trains with Lightning: a
LightningModule and a LightningDataModule, and only ``model`` and ``batch`` in its
config. The gate trains the module's own AdamW through ``training_step`` on the data
module's first batch, and a detached loss blocks the commit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import GIT_IDENTITY, commit_all, git, init_git_repo

HERE = Path(__file__).parent
CONFIG = """\
[tool.mlsmoke.overfit]
model = "lightning_project:Classifier"
batch = "lightning_project:datamodule"
"""


@pytest.fixture
def lightning_repo(hook_repo, tmp_path) -> Path:
    project = init_git_repo(tmp_path / "project")
    shutil.copy(HERE / "lightning_project.py", project)
    (project / "pyproject.toml").write_text(CONFIG)
    (project / ".gitignore").write_text("__pycache__/\n.mlsmoke/\nlightning_logs/\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n"
        "  hooks:\n  - id: overfit-batch\n    args: [-v]\n"
    )
    commit_all(project)
    return project


@pytest.mark.e2e
def test_a_lightning_project_needs_no_glue(lightning_repo, run_pre_commit):
    # The project's interpreter (torch and Lightning) is named the documented way.
    env = {"MLSMOKE_PYTHON": sys.executable}
    ran = run_pre_commit(
        lightning_repo, "run", "overfit-batch", "--all-files", "-v", env=env
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        "overfit default: PASS memorized · AdamW lr 0.003 (from configure_optimizers"
        " at lightning_project.py:" in ran.stdout
    )
    assert "loss: Classifier.training_step(batch, 0)" in ran.stdout
    assert (
        "batch: first batch of DataModule.train_dataloader(), after prepare_data()"
        ' and setup("fit") from lightning_project:datamodule' in ran.stdout
    )
    assert "Traceback" not in ran.stdout

    run_pre_commit(lightning_repo, "install", env=env).check_returncode()
    source = lightning_repo / "lightning_project.py"
    source.write_text(
        source.read_text().replace(
            "loss = F.cross_entropy(self(inputs), labels)\n        self.log",
            "loss = F.cross_entropy(self(inputs), labels).detach()\n        self.log",
            1,
        )
    )
    git(lightning_repo, "add", "--all")
    blocked = subprocess.run(
        ["git", "commit", "-m", "log the loss"],
        cwd=lightning_repo,
        env={**_environ(), **GIT_IDENTITY, **env},
        capture_output=True,
        text=True,
    )
    assert blocked.returncode != 0, blocked.stdout
    assert "overfit default: FAIL no-gradient" in blocked.stdout + blocked.stderr
    assert git(lightning_repo, "rev-list", "--count", "HEAD").strip() == "1"


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)
