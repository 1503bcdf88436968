"""Bugs that show in the shape of the loss curve: an objective with no lower bound, a
learning rate decades off (or 0), and a floor above the target. Each carries one bug,
marked ``# bug:`` where it happens, except the correct Gaussian NLL model."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from . import models
from .models import FEATURES, MLPClassifier

# --- objective bounds ---------------------------------------------------------------


def nll_of_logits(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.nll_loss(model(x), y)  # bug: log_softmax forgotten, nll_loss on logits


class GaussianRegressor(nn.Module):
    """Predicts a mean and a learned log-variance: its NLL is rightly negative once
    the variance shrinks below 1/(2 pi e)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, 64), nn.Tanh())
        self.mean = nn.Linear(64, 1)
        self.log_var = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.body(x)
        return self.mean(hidden), self.log_var(hidden).exp()


def regression_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = models._generator()
    x = torch.randn(models.SAMPLES, FEATURES, generator=g)
    return x, torch.randn(models.SAMPLES, 1, generator=g)


def gaussian_nll(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    mean, variance = model(x)
    return F.gaussian_nll_loss(mean, y, variance, full=True)


# --- learning rate --------------------------------------------------------------------


def narrow_mlp() -> MLPClassifier:
    return MLPClassifier(hidden=16)


def unnormalized_batch() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch()
    return 30.0 * x, y  # features with a std of 30: a steep loss surface


def sgd_on_a_steep_valley(params: Any) -> torch.optim.Optimizer:
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)  # bug: 10x the stable lr


def steep_regression_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = models._generator()
    x = 6.0 * torch.randn(models.SAMPLES, FEATURES, generator=g)  # unnormalized
    return x, x @ torch.randn(FEATURES, 1, generator=g)


def linear_regressor() -> nn.Module:
    return nn.Linear(FEATURES, 1)


def mse(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.mse_loss(model(x), y)


def warmup_that_never_starts(params: Any) -> tuple[Any, Any]:
    optimizer = torch.optim.AdamW(params, lr=3e-3)
    # bug: the warmup factor is step / warmup_steps with warmup_steps typed as 1e9
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.0)
    return optimizer, scheduler


def adamw_typed_three_decades_low(params: Any) -> tuple[Any, Any]:
    optimizer = torch.optim.AdamW(params, lr=3e-6)  # bug: meant 3e-3
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=1000)
    return optimizer, scheduler


# --- floors -------------------------------------------------------------------------


class MLPWithSoftmaxOutput(MLPClassifier):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x)).softmax(-1)  # bug: cross_entropy softmaxes again
