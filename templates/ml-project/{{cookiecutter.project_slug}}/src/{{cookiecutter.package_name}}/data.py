"""The data: points on interleaved spiral arms, one class per arm.

Generated, not downloaded, so a test or a commit hook can build a batch anywhere.
``spirals`` gives the points as a sensor would read them, in millimetres; ``normalize``
scales them to the unit disc the model is built for, and everything the model sees
goes through it.
``train_loader`` is the training pipeline: train.py trains on it, and the overfit-batch
gate memorizes its first batch. ``eval_set`` and ``arm`` are the regression suites'
evaluation set and slices (``[tool.mlsmoke.suites]``).

>>> x, y = next(iter(train_loader(TrainConfig(batch_size=8))))
>>> x.shape, y.shape
(torch.Size([8, 2]), torch.Size([8]))
>>> y.dtype
torch.int64
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from .recipe import TrainConfig

ARM_MM = 1024.0  # where the arms end, in the sensor's millimetres


def spirals(
    n: int, n_classes: int = 3, noise: float = 0.1, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` readings ``(n, 2)`` in millimetres and their arm index ``(n,)``, the same
    for a seed."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % n_classes  # (n,) balanced classes
    radius = torch.rand(n, generator=generator)  # (n,) in [0, 1)
    angle = 4.0 * radius + labels * (2 * math.pi / n_classes)  # (n,)
    angle = angle + noise * torch.randn(n, generator=generator)
    points = radius[:, None] * torch.stack([angle.cos(), angle.sin()], dim=1)  # (n, 2)
    return points * ARM_MM, labels


def normalize(readings: torch.Tensor) -> torch.Tensor:
    """Millimetres to the unit disc: the arms' ends at radius 1, where the model's
    initial weights and learning rate are set for.

    >>> normalize(torch.tensor([[512.0, -1024.0]]))
    tensor([[ 0.5000, -1.0000]])
    """
    return readings / ARM_MM


def train_loader(config: TrainConfig | None = None) -> DataLoader:
    """Shuffled training batches ``(x, y)``, shapes ``(B, 2)`` and ``(B,)``.

    The same seed gives the same batches, in the same order. Under torch.distributed
    each rank reads its own shard (B examples per rank), reshuffled at each epoch once
    the training loop calls ``loader.sampler.set_epoch(epoch)``.
    """
    config = config or TrainConfig()
    readings, labels = spirals(config.n_train, seed=config.seed)  # (N, 2), (N,)
    points = normalize(readings)  # (N, 2) in the unit disc
    dataset = TensorDataset(points, labels)
    sampler = None
    if dist.is_available() and dist.is_initialized():
        sampler = DistributedSampler(dataset, seed=config.seed)
    return DataLoader(
        dataset,
        batch_size=config.batch_size,
        shuffle=sampler is None,  # a DistributedSampler shuffles its shard itself
        sampler=sampler,
        drop_last=True,  # every batch has B examples
        num_workers=config.num_workers,
        generator=torch.Generator().manual_seed(config.seed),
    )


def eval_set(seed: int = 1) -> TensorDataset:
    """The evaluation set ``(x, y)`` the regression suites (``suites/``) are recorded
    on: 512 points train.py never trains on. Rounded to 4 decimals, so that every
    machine makes the same bytes (a sine may differ in its last bit between CPUs) and
    each example keeps its content hash.

    >>> x, y = eval_set()[0]
    >>> x.shape, int(y)
    (torch.Size([2]), 0)
    """
    readings, labels = spirals(512, seed=seed)  # (N, 2), (N,)
    return TensorDataset(normalize(readings).round(decimals=4), labels)


def arm(example: tuple[torch.Tensor, torch.Tensor]) -> str:
    """The suite slice of one example: its spiral arm.

    >>> arm((torch.zeros(2), torch.tensor(2)))
    'arm-2'
    """
    return f"arm-{int(example[1])}"


def example_batch(
    batch_size: int = 32, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch ``(x, y)`` of fresh points, normalized, for tests and examples."""
    readings, labels = spirals(batch_size, seed=seed)
    return normalize(readings), labels
