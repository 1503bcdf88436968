"""A classic bug through real pre-commit: the gate blocks it and says why."""

from __future__ import annotations

import sys

import pytest
from gitrepo import commit_all, init_git_repo

MODEL = """\
import torch
from torch import nn
from torch.nn import functional as F


class Classifier(nn.Module):
    def __init__(self, features: int = 16, hidden: int = 64, classes: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 8), nn.ReLU()
        )
        self.head = nn.Linear(8, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)  # (B, 8)
        self.last_features = h.detach()  # kept for logging
        return self.head(self.last_features)  # (B, classes)


def build() -> nn.Module:
    return Classifier()


def loss(model: nn.Module, batch) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


def one_batch():
    g = torch.Generator().manual_seed(0)
    return torch.randn(32, 16, generator=g), torch.arange(32) % 4
"""

PYPROJECT = f"""\
[tool.mlsmoke]
python = "{sys.executable}"

[tool.mlsmoke.overfit]
model = "toy:build"
batch = "toy:one_batch"
loss = "toy:loss"
"""


@pytest.mark.e2e
def test_a_detached_encoder_is_blocked_with_its_diagnosis(
    hook_repo, run_pre_commit, tmp_path
):
    project = init_git_repo(tmp_path / "project")
    (project / "toy.py").write_text(MODEL)
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n"
        "  hooks:\n  - id: overfit-batch\n"
    )
    commit_all(project)

    blocked = run_pre_commit(project, "run", "overfit-batch", "--all-files")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    out = blocked.stdout
    assert "overfit default: FAIL no-gradient" in out
    assert "4 of 6 parameter tensors get no gradient" in out
    assert "cut from the loss (.detach(), .data or torch.no_grad()): encoder.0" in out
    assert "remove .detach()" in out and "Traceback" not in out

    (project / "toy.py").write_text(
        MODEL.replace("h.detach()  # kept for logging", "h  # kept for logging")
    )
    commit_all(project)
    fixed = run_pre_commit(project, "run", "overfit-batch", "--all-files")
    assert fixed.returncode == 0, fixed.stdout
    assert "Passed" in fixed.stdout
