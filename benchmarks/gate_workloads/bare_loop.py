"""A hand-written training loop: the baseline the gate is measured against.

``python bare_loop.py MODEL STEPS LR`` imports torch, builds the model and its batch,
and runs STEPS Adam steps on that one batch, reading each step's loss like any training
loop.
"""

from __future__ import annotations

import json
import sys
import time

import torch

import models


def main(name: str, steps: int, lr: float) -> None:
    started = time.perf_counter()
    torch.manual_seed(models.SEED)
    model = getattr(models, name)()
    batch = getattr(models, f"{name}_batch")()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        loss = models.loss_of(model(*batch))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - started  # the span the gate reports as seconds
    print(json.dumps({"steps": steps, "final_loss": losses[-1], "seconds": seconds}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
