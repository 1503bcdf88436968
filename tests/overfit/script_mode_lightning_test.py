"""Script mode on a Lightning script: ``trainer.fit`` calls ``optimizer.step(closure)``
and the backward runs inside it, so an update is judged after its step."""

from __future__ import annotations

from pathlib import Path

from gitrepo import init_git_repo
from script_mode_test import code, overfit

TRAIN = """\
import argparse

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-2)
parser.add_argument("--epochs", type=int, default=100)
args = parser.parse_args()
generator = torch.Generator().manual_seed(0)
data = TensorDataset(
    torch.randn(64, 8, generator=generator),
    torch.randint(0, 4, (64,), generator=generator),
)
trainer = L.Trainer(
    max_epochs=args.epochs, accelerator="cpu", logger=False,
    enable_checkpointing=False, enable_progress_bar=False,
)
trainer.fit(Classifier(args.lr), DataLoader(data, batch_size=16))
"""


def lightning_project(tmp_path: Path, lr: str = "1e-2") -> Path:
    project = init_git_repo(tmp_path / "lit")
    (project / "train.py").write_text(TRAIN.replace("default=1e-2", f"default={lr}"))
    (project / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nscript = "train.py"\n'
    )
    return project


def test_a_lightning_script_memorizes_its_first_batch(tmp_path):
    ran, result = overfit(lightning_project(tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
    assert "pinned: every batch is the first of the first DataLoader" in ran.stdout


def test_a_lightning_scripts_lr_too_low_names_the_parser_default(tmp_path):
    ran, result = overfit(lightning_project(tmp_path, lr="1e-7"))
    assert ran.returncode == 1 and code(result) == "lr-too-low", ran.stdout
    assert "(--lr default 1e-07)" in ran.stdout
