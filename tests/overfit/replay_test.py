"""An objective that draws random numbers outside every module is replayed: each step
draws what the first one drew. Randomness inside a module is left alone."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit.process.settings import DEFAULT_LR
from mlsmoke.overfit.training.engine import train
from mlsmoke.overfit.training.optimizers import optimizer_factory

ADAM = optimizer_factory("adam", None, DEFAULT_LR["adam"])


class Denoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(9, 64), nn.ReLU(), nn.Linear(64, 8))

    def forward(self, noisy: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([noisy, level], dim=-1))


class NoisyInputs(nn.Module):
    """Noise drawn inside the module's own forward."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x + torch.randn_like(x))


def clean() -> torch.Tensor:
    return torch.randn(16, 8, generator=torch.Generator().manual_seed(0))


def noise_regression(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Predict the noise mixed into ``x`` at a random level: a denoising objective."""
    noise = torch.randn_like(x)
    level = torch.rand(len(x), 1)
    return F.mse_loss(model((1 - level) * x + level * noise, level), noise)


def reconstruct(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(model(x), x)


def run(model, loss, **options):
    settings = dict(lr=None, max_steps=300, target_loss=None, target_ratio=0.05,
                    device="cpu", timeout=60, seed=0)  # fmt: skip
    settings.update(options)
    return train(model, clean, loss, ADAM, **settings)


def test_draws_outside_the_model_are_replayed_and_memorized() -> None:
    evidence = run(Denoiser, noise_regression)
    assert evidence.replayed_draws
    assert evidence.memorized, evidence.losses[-5:]


def test_each_step_draws_what_the_first_drew() -> None:
    seen: list[torch.Tensor] = []

    def recording(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        seen.append(torch.randn(3))
        return noise_regression(model, x)

    run(Denoiser, recording, max_steps=3)
    assert len(seen) == 4 and all(torch.equal(draw, seen[0]) for draw in seen)


def test_noise_inside_a_module_is_not_replayed() -> None:
    evidence = run(NoisyInputs, reconstruct, max_steps=5)
    assert not evidence.replayed_draws


def test_a_deterministic_objective_is_not_replayed() -> None:
    evidence = run(Denoiser, lambda m, x: F.mse_loss(m(x, x[:, :1]), x), max_steps=5)
    assert not evidence.replayed_draws
