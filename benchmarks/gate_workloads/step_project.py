"""The gate benchmark's models trained by a project's step function: the textbook step
the gate's own loop takes, written as a project writes it."""

from __future__ import annotations

import torch

from models import loss_of


def train_step(model, batch, optimizer) -> torch.Tensor:
    model.train()
    loss = loss_of(model(*batch))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss
