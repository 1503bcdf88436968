"""A run that stops short with dropout on is judged by the batch's loss in eval mode:
what the model learned, not how noisy training is. Both losses are reported."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from mlsmoke.overfit import check


class NoisyMLP(nn.Module):
    def __init__(self, p: float) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(8, 128), nn.ReLU(), nn.Dropout(p), nn.Linear(128, 4)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return torch.randn(16, 8, generator=generator), torch.arange(16) % 4


def loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


def test_dropout_that_keeps_the_train_loss_up_passes_on_its_eval_loss():
    result = check(
        lambda: NoisyMLP(0.7), batch, loss, lr=1e-2, max_steps=200, target_ratio=0.01
    )
    assert result.passed, result.report()
    assert "judged in eval mode" in result.diagnosis.summary
    assert result.final_loss > result.target  # the train-mode loss, reported too


def test_without_dropout_the_verdict_is_the_train_loss_alone():
    result = check(lambda: NoisyMLP(0.0), batch, loss, lr=1e-2, max_steps=150)
    assert result.passed and "eval mode" not in result.diagnosis.summary


def test_a_model_that_learned_nothing_still_fails_in_eval_mode():
    result = check(lambda: NoisyMLP(0.7), batch, loss, lr=1e-7, max_steps=30)
    assert not result.passed


def nll_of_logits(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.nll_loss(model(x), y)  # raw logits: falls without bound


def test_a_negative_target_reached_while_still_falling_is_no_pass():
    result = check(lambda: NoisyMLP(0.0), batch, nll_of_logits, target_loss=-5.0)
    assert not result.passed and result.diagnosis.code == "wrong-objective"
