"""A loss with an extra term added with a weight, and twins: a tabular regressor
whose loss adds an L2 penalty on every weight, and a token classifier whose loss adds
a penalty on the logits' size, or a confidence penalty (the predictions' negative
entropy). At weight 1 (2 for the confidence penalty, which is bounded) the penalty
floors the loss; at 1e-5 (0.01) the batch is memorized. Two of the classifiers
compute their loss inside forward, as nanoGPT and Hugging Face models do.

Tiny and seeded: each run takes about a second on one CPU thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

FEATURES, HIDDEN, SAMPLES, CLASSES, VOCAB, TOKENS = 6, 32, 16, 4, 30, 6


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def regressor() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))


def prices() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(SAMPLES, FEATURES, generator=_generator(1))
    return x, torch.randn(SAMPLES, 1, generator=_generator(2)) * 1.5  # (B, 1)


def with_l2_penalty(weight: float):
    def loss(model: nn.Module, batch: tuple) -> torch.Tensor:
        x, y = batch
        penalty = sum(p.pow(2).sum() for p in model.parameters())
        return F.mse_loss(model(x), y) + weight * penalty

    return loss


class TokenClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.EmbeddingBag(VOCAB, HIDDEN)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))  # (B, CLASSES)


def token_batch() -> dict[str, torch.Tensor]:
    ids = torch.randint(0, VOCAB, (SAMPLES, TOKENS), generator=_generator(3))
    return {"ids": ids, "label": torch.arange(SAMPLES) % CLASSES}


def with_logit_penalty(weight: float):
    """Cross-entropy plus a penalty on the logits' squared size (a z-loss)."""

    def loss(model: nn.Module, batch: dict) -> torch.Tensor:
        logits = model(batch["ids"])
        data = F.cross_entropy(logits, batch["label"])
        return data + weight * logits.pow(2).mean()

    return loss


def with_confidence_penalty(weight: float):
    """Cross-entropy plus a weight times the predictions' negative entropy (a
    confidence penalty): a heavy weight keeps the predictions near uniform."""

    def loss(model: nn.Module, batch: dict) -> torch.Tensor:
        logits = model(batch["ids"])
        data = F.cross_entropy(logits, batch["label"])
        p = logits.softmax(-1)
        negative_entropy = (p * p.log()).sum(-1).mean()
        return data + weight * negative_entropy

    return loss


class ClassifierWithLoss(TokenClassifier):
    """A classifier whose forward computes its own loss, as nanoGPT's does: given
    the labels it returns ``(logits, loss)``, the loss adding a weight times a
    penalty on the logits' size."""

    def __init__(self, weight: float) -> None:
        super().__init__()
        self.weight = weight

    def forward(self, ids: torch.Tensor, label: torch.Tensor) -> tuple:
        logits = self.head(self.embed(ids))  # (B, CLASSES)
        loss = F.cross_entropy(logits, label) + self.weight * logits.pow(2).mean()
        return logits, loss


@dataclass
class Output:
    loss: torch.Tensor | None
    logits: torch.Tensor


class ConfidentClassifier(TokenClassifier):
    """A classifier called as Hugging Face models are, ``model(ids, labels=...)``,
    whose output's ``loss`` adds a confidence penalty: a weight times its
    predictions' negative entropy."""

    def __init__(self, weight: float) -> None:
        super().__init__()
        self.weight = weight

    def forward(self, ids: torch.Tensor, labels: torch.Tensor | None = None) -> Output:
        logits = self.head(self.embed(ids))  # (B, CLASSES)
        if labels is None:
            return Output(None, logits)
        p = logits.softmax(-1)
        negative_entropy = (p * p.log()).sum(-1).mean()
        loss = F.cross_entropy(logits, labels) + self.weight * negative_entropy
        return Output(loss, logits)


def token_batch_with_labels() -> dict[str, torch.Tensor]:
    batch = token_batch()
    return {"ids": batch["ids"], "labels": batch["label"]}
