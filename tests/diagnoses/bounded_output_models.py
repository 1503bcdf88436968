"""A tabular regressor (house prices, standardized) whose output head ends in a
squashing module, with twins: the same head without it, and the same squashed head
with targets scaled into its range.

Tiny and seeded: each run takes about a second on one CPU thread.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

FEATURES, HIDDEN, SAMPLES = 6, 32, 16


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def regressor(squash: nn.Module | None) -> nn.Module:
    torch.manual_seed(0)
    layers = [nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1)]
    return nn.Sequential(*layers, *([squash] if squash is not None else []))


def tanh_regressor() -> nn.Module:
    return regressor(nn.Tanh())  # the bug, for standardized targets


def sigmoid_regressor() -> nn.Module:
    return regressor(nn.Sigmoid())


def plain_regressor() -> nn.Module:
    return regressor(None)


def standardized_prices() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(SAMPLES, FEATURES, generator=_generator(1))
    prices = torch.randn(SAMPLES, 1, generator=_generator(2)) * 1.5  # (B, 1)
    return x, prices


def prices_in_the_unit_range() -> tuple[torch.Tensor, torch.Tensor]:
    x, prices = standardized_prices()
    return x, (prices - prices.min()) / (prices.max() - prices.min()) * 0.8 + 0.1


def squared_error(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, prices = batch
    return F.mse_loss(model(x), prices)


def adamw(weight_decay: float):
    def build(parameters):
        return torch.optim.AdamW(parameters, lr=5e-3, weight_decay=weight_decay)

    return build
