"""The project ``bench_profile`` profiles: two small models on a DataLoader, and a
loader and a model that sleep known times (the environment sets them), so that the
data's share of a step is known before it is measured."""

from __future__ import annotations

import os
import time

import torch
import torch.nn.functional as F

ITEM_SLEEP = float(os.environ.get("ITEM_SLEEP", "0"))
FORWARD_SLEEP = float(os.environ.get("FORWARD_SLEEP", "0"))
BATCH = 32
SLEEPY_BATCH = 1


class Images(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 100_000

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if ITEM_SLEEP:
            time.sleep(ITEM_SLEEP)
        return torch.randn(3, 16, 16), index % 10


def loader() -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(Images(), batch_size=BATCH)


def sleepy_loader() -> torch.utils.data.DataLoader:
    """One sample a batch: one sleep a step in the data as in the forward, so that a
    busy machine's late wake-ups fall on both alike."""
    return torch.utils.data.DataLoader(Images(), batch_size=SLEEPY_BATCH)


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(768, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )  # fmt: skip


def cnn() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10),
    )  # fmt: skip


class Sleeper(torch.nn.Module):
    """A linear layer whose forward sleeps FORWARD_SLEEP seconds."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(768, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(FORWARD_SLEEP)
        return self.fc(x.flatten(1))


def loss(model: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor]):
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels)
