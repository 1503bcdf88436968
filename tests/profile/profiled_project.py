"""The project ``mlsmoke profile`` runs on in the tests: a Dataset whose
``__getitem__`` sleeps a known time, a model whose forward sleeps a known time, and the
settings through environment variables, so that one project serves every case."""

from __future__ import annotations

import os
import time

import torch
import torch.nn.functional as F

ITEM_SLEEP = float(os.environ.get("ITEM_SLEEP", "0"))  # seconds per sample
FORWARD_SLEEP = float(os.environ.get("FORWARD_SLEEP", "0"))  # seconds per forward
WORKERS = int(os.environ.get("WORKERS", "0"))
BATCH = int(os.environ.get("BATCH", "10"))
HANG_PID_FILE = os.environ.get("HANG_PID_FILE", "")


class SleepyDataset(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 100_000

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if HANG_PID_FILE:  # a sample that never comes, in the process that reads it
            with open(HANG_PID_FILE, "a") as pids:
                pids.write(f"{os.getpid()}\n")
            time.sleep(3600)
        if ITEM_SLEEP:
            time.sleep(ITEM_SLEEP)
        return torch.randn(8), index % 3


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if FORWARD_SLEEP:
            time.sleep(FORWARD_SLEEP)
        return self.fc(x)


def model() -> Net:
    return Net()


def loader() -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(
        SleepyDataset(), batch_size=BATCH, num_workers=WORKERS
    )


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(BATCH, 8), torch.arange(BATCH) % 3


def loss(model: Net, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels)


class BrokenDataset(SleepyDataset):
    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        raise OSError(f"cannot read sample {index}: shard-3.bin is missing")


def broken_loader() -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(BrokenDataset(), batch_size=BATCH)


class ZeroFillingSGD(torch.optim.SGD):
    """An optimizer whose zero_grad fills gradients with zeros, as torch's did
    before 2.0."""

    def zero_grad(self, set_to_none: bool = False) -> None:
        super().zero_grad(set_to_none=set_to_none)


def zero_filling_sgd(params) -> ZeroFillingSGD:
    return ZeroFillingSGD(params, lr=0.01)
