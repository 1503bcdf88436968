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


class SquashingRegressor(nn.Module):
    """The head's output squashed by a call in forward, not by a module."""

    def __init__(self, squash) -> None:
        super().__init__()
        self.body = regressor(None)
        self.squash = squash

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.squash(self.body(x))  # (B, 1)


def regressor_calling_sigmoid() -> nn.Module:
    return SquashingRegressor(torch.sigmoid)


def regressor_calling_tanh() -> nn.Module:
    return SquashingRegressor(lambda out: out.tanh())


class MixtureHead(nn.Module):
    """Mixture weights over K components, through F.softmax, fitted by MSE."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU())
        self.weights = nn.Linear(HIDDEN, COMPONENTS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softmax(self.weights(self.net(x)), dim=-1)  # (B, K)


COMPONENTS = 4


def component_scores() -> tuple[torch.Tensor, torch.Tensor]:
    """Standardized scores per component: outside a softmax's [0, 1]."""
    x = torch.randn(SAMPLES, FEATURES, generator=_generator(1))
    return x, torch.randn(SAMPLES, COMPONENTS, generator=_generator(3)) * 1.5


def component_shares() -> tuple[torch.Tensor, torch.Tensor]:
    """Shares per component, each row summing to 1: a softmax's own range."""
    x, scores = component_scores()
    return x, torch.softmax(scores, dim=-1)
