"""The built-in optimizers apply torch.optim's update rules, step for step."""

from __future__ import annotations

import pytest
import torch

from mlsmoke.overfit.training.optimizers import BUILT_IN

REFERENCES = {
    "adam": lambda params, lr: torch.optim.Adam(params, lr=lr),
    "adamw": lambda params, lr: torch.optim.AdamW(params, lr=lr),
    "sgd": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9),
}


def trajectory(make_optimizer, steps=5):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)
    )
    frozen = torch.nn.Parameter(torch.ones(3), requires_grad=False)
    optimizer = make_optimizer([*model.parameters(), frozen], 0.05)
    inputs = torch.randn(6, 4)
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        model(inputs).pow(2).mean().backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()] + [frozen]


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_matches_torch_optim(name):
    ours, reference = trajectory(BUILT_IN[name]), trajectory(REFERENCES[name])
    for mine, theirs in zip(ours, reference):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)
