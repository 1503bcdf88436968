"""Models that keep what trains outside what torch registers, each with a correct
twin: a mixture of experts whose experts sit in a plain Python list, and a
matrix-factorization recommender whose embedding tables are bare tensors.

Tiny and seeded: each run takes about a second on one CPU thread.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

FEATURES, HIDDEN, EXPERTS, CLASSES, SAMPLES = 8, 16, 4, 4, 16
USERS, ITEMS, FACTORS = 6, 7, 4


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --- a mixture of experts ---


def _expert() -> nn.Module:
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES)
    )


class MixtureOfExperts(nn.Module):
    """A softmax router weighing the experts' logits."""

    def __init__(self, in_a_list: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.router = nn.Linear(FEATURES, EXPERTS)
        experts = [_expert() for _ in range(EXPERTS)]
        # the bug: a plain list registers nothing
        self.experts = experts if in_a_list else nn.ModuleList(experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = self.router(x).softmax(-1)  # (B, E)
        logits = torch.stack([expert(x) for expert in self.experts], 1)  # (B, E, C)
        return (weights.unsqueeze(-1) * logits).sum(1)  # (B, C)


def experts_in_a_list() -> nn.Module:
    return MixtureOfExperts(in_a_list=True)


def features() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(SAMPLES, FEATURES, generator=_generator(1))
    return x, torch.randint(CLASSES, (SAMPLES,), generator=_generator(2))


def classify(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, labels = batch
    return F.cross_entropy(model(x), labels)


# --- a matrix-factorization recommender ---


class Recommender(nn.Module):
    """A rating is the dot product of a user's and an item's factors, plus a bias."""

    def __init__(self, bare: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        users = torch.randn(USERS, FACTORS) * 0.3
        items = torch.randn(ITEMS, FACTORS) * 0.3
        if bare:  # the bug: bare tensors; model.parameters() lists only the bias
            self.users, self.items = users.requires_grad_(), items.requires_grad_()
        else:
            self.users, self.items = nn.Parameter(users), nn.Parameter(items)
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return (self.users[users] * self.items[items]).sum(-1) + self.bias  # (B,)


def bare_tables() -> nn.Module:
    return Recommender(bare=True)


def ratings() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    users = torch.arange(SAMPLES) % USERS
    items = torch.randint(ITEMS, (SAMPLES,), generator=_generator(3))
    return (
        users,
        items,
        torch.randint(1, 6, (SAMPLES,), generator=_generator(4)).float(),
    )


def squared_error(model: nn.Module, batch: tuple) -> torch.Tensor:
    users, items, stars = batch
    return F.mse_loss(model(users, items), stars)
