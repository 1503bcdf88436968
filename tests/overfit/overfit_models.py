"""Small models the gate must memorize with its defaults, and their batches.

This file is also copied into the throwaway projects of the end-to-end tests, so it
imports nothing but torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


class MLP(nn.Module):
    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # (B, classes)


def mlp_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return torch.randn(16, 16, generator=generator), torch.arange(16) % 4


def mlp_loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]):
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels)


class CNN(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(16 * 4 * 4, classes)

    def forward(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(images)), 2)  # (B, 8, 8, 8)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # (B, 16, 4, 4)
        return F.cross_entropy(self.head(x.flatten(1)), labels)  # scalar output


def cnn_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(2)
    return torch.randn(16, 1, 16, 16, generator=generator), torch.arange(16) % 10


class TinyLM(nn.Module):
    """A causal transformer LM returning nanoGPT's ``(logits, loss)``."""

    def __init__(self, vocab: int = 32, width: int = 32, context: int = 16):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(
            width, nhead=2, dim_feedforward=64, dropout=0.0, batch_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor):
        T = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(T, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        x = self.blocks(x, mask=mask, is_causal=True)  # (B, T, width)
        logits = self.head(x)  # (B, T, vocab)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def lm_batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    tokens = torch.randint(0, 32, (8, 17), generator=generator)
    return tokens[:, :-1], tokens[:, 1:]


@dataclass
class SequenceClassifierOutput:
    loss: torch.Tensor
    logits: torch.Tensor


class HFStyleClassifier(nn.Module):
    """Called as ``model(**batch)``; returns an output with ``.loss``."""

    def __init__(self, vocab: int = 50, width: int = 32, labels: int = 3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, width)
        self.classifier = nn.Linear(width, labels)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor):
        logits = self.classifier(self.embed(input_ids))  # (B, labels)
        return SequenceClassifierOutput(F.cross_entropy(logits, labels), logits)


def hf_batch() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(4)
    return {
        "input_ids": torch.randint(0, 50, (12, 10), generator=generator),
        "labels": torch.arange(12) % 3,
    }
