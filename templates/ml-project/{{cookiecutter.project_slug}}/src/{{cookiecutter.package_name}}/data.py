"""The data: points on interleaved spiral arms, one class per arm.

Generated, not downloaded, so a test or a commit hook can build a batch anywhere.

>>> x, y = example_batch(batch_size=8)
>>> x.shape, y.shape
(torch.Size([8, 2]), torch.Size([8]))
>>> y.dtype
torch.int64
"""

from __future__ import annotations

import math

import torch


def spirals(
    n: int, n_classes: int = 3, noise: float = 0.1, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points ``(n, 2)`` and their arm index ``(n,)``, the same for a seed."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % n_classes  # (n,) balanced classes
    radius = torch.rand(n, generator=generator)  # (n,) in [0, 1)
    angle = 4.0 * radius + labels * (2 * math.pi / n_classes)  # (n,)
    angle = angle + noise * torch.randn(n, generator=generator)
    points = radius[:, None] * torch.stack([angle.cos(), angle.sin()], dim=1)  # (n, 2)
    return points, labels


def example_batch(
    batch_size: int = 32, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch ``(x, y)``: the batch the overfit-batch gate memorizes."""
    return spirals(batch_size, seed=seed)
