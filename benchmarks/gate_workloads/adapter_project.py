"""One model three ways, for the adapters benchmark: a plain factory with a batch
function (the glue users wrote before the adapters), the same model drawing from a
DataLoader, and the same model as a LightningModule. All three train torch.optim.Adam
at the same lr on the same first batch.
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, TensorDataset

import models

LR = 3e-3
EXAMPLES, BATCH = 256, 64


def mlp() -> torch.nn.Module:
    return models.MLPClassifier()


def adam(params) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=LR)


def train_loader() -> DataLoader:
    generator = torch.Generator().manual_seed(models.SEED)
    inputs = torch.randn(EXAMPLES, 64, generator=generator)
    labels = torch.randint(0, 10, (EXAMPLES,), generator=generator)
    return DataLoader(TensorDataset(inputs, labels), batch_size=BATCH, shuffle=True)


def first_batch():
    """The glue a plain factory needs: the loader's first batch."""
    return next(iter(train_loader()))


def lightning_mlp():
    import lightning

    class LitMLP(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = models.MLPClassifier()

        def training_step(self, batch, batch_idx):
            loss = self.model(*batch)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=LR)

    return LitMLP()
