"""The model: a small residual MLP classifier, in one readable file.

Shapes use B for the batch size, D for the input features, H for the hidden width and C
for the number of classes.

>>> model = Classifier(ClassifierConfig(n_features=2, n_classes=3))
>>> logits, loss = model(torch.randn(4, 2))
>>> logits.shape
torch.Size([4, 3])
>>> loss is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel


@dataclass
class ClassifierConfig:
    n_features: int = 2
    n_classes: int = 3
    hidden: int = 64
    n_blocks: int = 2
    dropout: float = 0.0


class Block(nn.Module):
    """LayerNorm, then a two-layer MLP, added back to its input (pre-norm residual)."""

    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(config.hidden)
        self.fc = nn.Linear(config.hidden, 4 * config.hidden)
        self.proj = nn.Linear(4 * config.hidden, config.hidden)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.fc(self.norm(x)))  # (B, 4H)
        return x + self.dropout(self.proj(h))  # (B, H)


class Classifier(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Linear(config.n_features, config.hidden)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_blocks))
        self.norm = nn.LayerNorm(config.hidden)
        self.head = nn.Linear(config.hidden, config.n_classes)

    def forward(
        self, x: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Class logits for ``x``, and the cross-entropy loss when targets are given."""
        h = self.embed(x)  # (B, D) -> (B, H)
        for block in self.blocks:
            h = block(h)  # (B, H)
        logits = self.head(self.norm(h))  # (B, C)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits, targets)  # targets: (B,) class indices
        return logits, loss


def build_model() -> nn.Module:
    """The model train.py and the overfit-batch gate train (``[tool.mlsmoke.overfit]``).

    Under torch.distributed (torchrun, or the overfit-batch-ddp hook) it comes wrapped
    in DistributedDataParallel, which starts every rank from rank 0's weights and
    averages the gradients over the ranks in ``backward()``.
    """
    model = Classifier(ClassifierConfig())
    if dist.is_available() and dist.is_initialized():
        return DistributedDataParallel(model)
    return model
