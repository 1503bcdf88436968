"""The training recipe: its settings, its optimizer and its learning-rate schedule.

train.py trains with it, and so does the overfit-batch gate at every commit
(``[tool.mlsmoke.overfit]`` in pyproject.toml), so a wrong lr or schedule fails there.

>>> config = TrainConfig(warmup_steps=2, steps=10, min_lr_ratio=0.1)
>>> [round(lr_factor(step, config), 2) for step in (0, 1, 2, 6, 10, 50)]
[0.33, 0.67, 1.0, 0.55, 0.1, 0.1]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch


@dataclass
class TrainConfig:
    lr: float = 3e-3  # the peak lr, reached after the warmup
    min_lr_ratio: float = 0.1  # the cosine decays to lr * min_lr_ratio at `steps`
    warmup_steps: int = 20
    weight_decay: float = 0.01
    batch_size: int = 64
    steps: int = 500
    n_train: int = 2048  # generated training points
    # DataLoader workers. 0: the spirals are tensors in memory, which a worker process
    # would only copy. Raise it when a batch means reading and decoding files.
    num_workers: int = 0
    seed: int = 0


def lr_factor(step: int, config: TrainConfig) -> float:
    """The lr at ``step``, as a fraction of ``config.lr``: warmup, then cosine decay."""
    if step < config.warmup_steps:
        return (step + 1) / (config.warmup_steps + 1)
    if step >= config.steps:
        return config.min_lr_ratio
    progress = (step - config.warmup_steps) / (config.steps - config.warmup_steps)
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))  # 1 -> 0
    return config.min_lr_ratio + (1.0 - config.min_lr_ratio) * cosine


def make_optimizer(
    params: Iterable[torch.nn.Parameter], config: TrainConfig | None = None
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """AdamW and its schedule; step the scheduler once after every optimizer step.

    The overfit-batch gate calls it with the parameters alone: the default recipe.
    """
    config = config or TrainConfig()
    optimizer = torch.optim.AdamW(
        params, lr=config.lr, weight_decay=config.weight_decay
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(step, config)
    )
    return optimizer, scheduler
