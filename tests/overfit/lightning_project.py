"""A small project trained with PyTorch Lightning, written as such projects are: a
LightningModule, a LightningDataModule and plain DataLoaders, with no code for mlsmoke.

The adapter tests and the end-to-end test point the gate at these; each bug is a
function a project could have written by mistake.
"""

from __future__ import annotations

import lightning
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

FEATURES, CLASSES, EXAMPLES, BATCH = 12, 4, 64, 16


def dataset() -> TensorDataset:
    generator = torch.Generator().manual_seed(7)
    inputs = torch.randn(EXAMPLES, FEATURES, generator=generator)
    labels = torch.randint(0, CLASSES, (EXAMPLES,), generator=generator)
    return TensorDataset(inputs, labels)


class Classifier(lightning.LightningModule):
    """An MLP classifier trained with AdamW."""

    def __init__(self, lr: float = 3e-3, hidden: int = 64):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Linear(FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES)
        )

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.net(inputs)

    def training_step(self, batch, batch_idx):
        inputs, labels = batch
        loss = F.cross_entropy(self(inputs), labels)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


class DataModule(lightning.LightningDataModule):
    def __init__(self, batch_size: int = BATCH, num_workers: int = 0):
        super().__init__()
        self.batch_size, self.num_workers = batch_size, num_workers
        self.train = None

    def prepare_data(self) -> None:
        pass  # a real project downloads here

    def setup(self, stage: str) -> None:
        self.train = dataset()

    def train_dataloader(self) -> DataLoader:
        return DataLoader(
            self.train,
            batch_size=self.batch_size,
            shuffle=True,
            num_workers=self.num_workers,
        )


def train_loader() -> DataLoader:
    """The training loader a train.py would build."""
    return DataLoader(dataset(), batch_size=BATCH, shuffle=True)


def loader_with_workers() -> DataLoader:
    return DataLoader(dataset(), batch_size=BATCH, shuffle=True, num_workers=2)


def datamodule() -> DataModule:
    return DataModule()


class PlainClassifier(nn.Module):
    """The same network without Lightning: its forward returns the loss."""

    def __init__(self, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES)
        )

    def forward(self, inputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.net(inputs), labels)


def make_optimizer(params) -> torch.optim.Optimizer:
    return torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01)


# --- bugs -------------------------------------------------------------------------


class WarmupStuckAtZero(Classifier):
    """Linear warmup written with integer division: the factor is 0 until step 1000."""

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        warmup = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min(1.0, step // 1000)
        )
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": warmup, "interval": "step"},
        }


class DetachedLoss(Classifier):
    """training_step returns the loss it logs, detached."""

    def training_step(self, batch, batch_idx):
        inputs, labels = batch
        loss = F.cross_entropy(self(inputs), labels).detach()
        self.log("train_loss", loss)
        return {"loss": loss}


def lr_typed_1000x_too_low() -> Classifier:
    return Classifier(lr=3e-6)  # meant 3e-3


def make_optimizer_1000x_too_low(params) -> torch.optim.Optimizer:
    return torch.optim.AdamW(params, lr=3e-6, weight_decay=0.01)  # meant 3e-3


class SGDRecipe(Classifier):
    """SGD with momentum at the lr given."""

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def sgd_100x_too_high() -> SGDRecipe:
    return SGDRecipe(lr=30.0)  # meant 0.3


class Gan(Classifier):
    def configure_optimizers(self):
        half = len(self.net) // 2
        return [
            torch.optim.Adam(self.net[:half].parameters()),
            torch.optim.Adam(self.net[half:].parameters()),
        ]


def _collate_without_stacking(examples):
    inputs = [inputs for inputs, _ in examples]  # forgot torch.stack
    labels = torch.stack([label for _, label in examples])
    return inputs.float(), labels


def loader_with_broken_collate() -> DataLoader:
    return DataLoader(dataset(), batch_size=BATCH, collate_fn=_collate_without_stacking)
