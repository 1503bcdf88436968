"""Dropout in the model: which modules drop, and the same model with them off.

Dropout makes every step train on another random sub-network; at a high rate a model
cannot memorize one batch at all. The ``dropout-active`` warning and the
``not-learning`` diagnosis both read it from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def active_dropout(model: torch.nn.Module) -> list[tuple[str, float]]:
    """``(module name, p)`` of every dropout module that drops something."""
    return [
        (name or "model", float(module.p))
        for name, module in model.named_modules()
        if _is_dropout(module) and module.p > 0
    ]


def without_dropout(factory: Callable[[], Any]) -> Callable[[], Any]:
    """``factory``, with every dropout module of what it builds at p = 0."""

    def build() -> Any:
        model = factory()
        if isinstance(model, torch.nn.Module):
            for module in model.modules():
                if _is_dropout(module):
                    module.p = 0.0
        return model

    return build


def _is_dropout(module: torch.nn.Module) -> bool:
    return "Dropout" in type(module).__name__ and isinstance(
        getattr(module, "p", None), (int, float)
    )
