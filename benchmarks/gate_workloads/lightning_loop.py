"""The same training through Lightning: ``Trainer(overfit_batches=1, max_steps=N)``.

``python lightning_loop.py MODEL STEPS LR``. Logging, checkpointing, the progress bar
and the model summary are off, so Lightning does no work the other two runners skip.
"""

from __future__ import annotations

import json
import sys
import time

import lightning
import torch
from torch.utils.data import DataLoader

import models


class OneBatch(lightning.LightningModule):
    def __init__(self, model: torch.nn.Module, lr: float):
        super().__init__()
        self.model = model
        self.lr = lr
        self.last_loss = float("nan")

    def training_step(self, batch, batch_idx):
        loss = models.loss_of(self.model(*batch))
        self.last_loss = loss.item()
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def main(name: str, steps: int, lr: float) -> None:
    started = time.perf_counter()
    torch.manual_seed(models.SEED)
    module = OneBatch(getattr(models, name)(), lr)
    batch = getattr(models, f"{name}_batch")()
    loader = DataLoader([batch], batch_size=None)
    trainer = lightning.Trainer(
        overfit_batches=1,
        max_steps=steps,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, train_dataloaders=loader)
    seconds = time.perf_counter() - started
    steps, loss = trainer.global_step, module.last_loss
    print(json.dumps({"steps": steps, "final_loss": loss, "seconds": seconds}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
