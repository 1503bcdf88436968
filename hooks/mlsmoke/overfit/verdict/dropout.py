"""Dropout in the model: which modules dropped while the gate trained, and the same
model with them off.

Dropout makes every step train on another random sub-network; at a high rate a model
cannot memorize one batch at all. The ``dropout-active`` warning and the
``not-learning`` diagnosis both read it from here. A module counts when it ran in
training mode during the first step (a forward that switches itself to eval mode
drops nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.training.instruments import is_dropout


def active_dropout(evidence: Evidence) -> list[tuple[str, float]]:
    """``(module name, p)`` of every dropout module that dropped while training."""
    return list(evidence.dropout.items())


def without_dropout(factory: Callable[[], Any]) -> Callable[[], Any]:
    """``factory``, with every dropout module of what it builds at p = 0."""

    def build() -> Any:
        model = factory()
        if isinstance(model, torch.nn.Module):
            for module in model.modules():
                if is_dropout(module):
                    module.p = 0.0
        return model

    return build
