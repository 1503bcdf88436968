"""Three small CPU models and their batches: what the gate benchmark trains.

Each model is called as ``model(*batch)`` and returns its loss, the way the overfit gate
calls a model without a ``loss`` callable: the classifiers return the scalar loss, the
language model returns ``(logits, loss)`` like nanoGPT.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

SEED = 0


class MLPClassifier(nn.Module):
    def __init__(self, features: int = 64, hidden: int = 256, classes: int = 10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.net(x), y)  # x: (B, features), y: (B,)


class CNNClassifier(nn.Module):
    def __init__(self, channels: int = 3, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(channels, 16, 3, padding=1),  # (B, 16, 32, 32)
            nn.ReLU(),
            nn.MaxPool2d(2),  # (B, 16, 16, 16)
            nn.Conv2d(16, 32, 3, padding=1),  # (B, 32, 16, 16)
            nn.ReLU(),
            nn.MaxPool2d(2),  # (B, 32, 8, 8)
        )
        self.head = nn.Linear(32 * 8 * 8, classes)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = self.features(x).flatten(1)  # (B, 32 * 8 * 8)
        return F.cross_entropy(self.head(h), y)


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int, block: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        mask = torch.tril(torch.ones(block, block, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, block, block))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # each (B, T, C)
        q, k, v = (t.view(B, T, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))  # (B, H, T, T)
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)  # (B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, width: int, heads: int, block: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, block)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 64, block: int = 32, width: int = 64):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(block, width)
        self.blocks = nn.Sequential(*(Block(width, 4, block) for _ in range(2)))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        T = idx.size(1)
        x = self.tokens(idx) + self.positions(torch.arange(T))  # (B, T, C)
        logits = self.head(self.ln(self.blocks(x)))  # (B, T, vocab)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def mlp() -> nn.Module:
    return MLPClassifier()


def mlp_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(SEED)
    return torch.randn(256, 64, generator=generator), torch.randint(
        0, 10, (256,), generator=generator
    )


def cnn() -> nn.Module:
    return CNNClassifier()


def cnn_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(SEED)
    return torch.randn(64, 3, 32, 32, generator=generator), torch.randint(
        0, 10, (64,), generator=generator
    )


def lm() -> nn.Module:
    return TinyLM()


def lm_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(SEED)
    tokens = torch.randint(0, 64, (16, 33), generator=generator)
    return tokens[:, :-1], tokens[:, 1:]  # (B, T) inputs, (B, T) next tokens


def loss_of(output: torch.Tensor | tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The scalar loss a model above returned."""
    return output[-1] if isinstance(output, tuple) else output
