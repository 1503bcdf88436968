"""Tiny models for the loaders of ``expect_loaders``, shaped like the projects' own:
an image classifier whose forward takes the labels, a nanoGPT-shaped language model
returning ``(logits, loss)``, and a classifier trained on soft (one-hot) targets.
``classes`` and ``vocab`` narrow a head or a vocabulary, as a config change does."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from expect_loaders import CLASSES, VOCAB
from torch import nn


class ImageClassifier(nn.Module):
    def __init__(self, classes: int = CLASSES) -> None:
        super().__init__()
        self.head = nn.Linear(3 * 8 * 8, classes)

    def forward(self, pixels: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.head(pixels.flatten(1)), labels)  # (B, C), (B,)


class TinyLM(nn.Module):
    """``shift_inside``: the targets are the input moved by one inside the model (as
    Hugging Face's causal LMs do), so no field of the batch is the loss's target."""

    def __init__(self, vocab: int = VOCAB, shift_inside: bool = False) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, 8)
        self.lm_head = nn.Linear(8, vocab)
        self.shift_inside = shift_inside
        self.loss = nn.CrossEntropyLoss(ignore_index=-1)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor):
        logits = self.lm_head(self.wte(idx))  # (B, T, V)
        if self.shift_inside:
            logits, targets = logits[:, :-1], idx[:, 1:]
        flat = logits.reshape(-1, logits.size(-1))
        return logits, self.loss(flat, targets.reshape(-1))


class SoftTargetClassifier(nn.Module):
    """Trained on the one-hot ``target``; the ``label`` ids never reach the loss."""

    def __init__(self, classes: int = CLASSES) -> None:
        super().__init__()
        self.head = nn.Linear(4, classes)

    def forward(self, features, label, target) -> torch.Tensor:
        return F.cross_entropy(self.head(features), target)
