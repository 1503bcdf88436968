"""Memorization tests: the model must be able to overfit one batch, trained the way
train.py trains it (its loader, optimizer and lr schedule).

The commit-time check is the overfit-batch hook; these run the same engine from
pytest, through mlsmoke's `overfit` fixture and its Python API. The slow test is the
longer tier, a bigger batch to a lower loss: `pytest -m slow`.
"""

from __future__ import annotations

import pytest
from mlsmoke.overfit import check

from {{ cookiecutter.package_name }} import (
    TrainConfig,
    build_model,
    make_optimizer,
    train_loader,
)


def test_memorizes_one_batch(overfit) -> None:
    result = overfit(build_model, train_loader, optimizer=make_optimizer)
    assert result.steps > 0


@pytest.mark.slow
def test_memorizes_a_bigger_batch_to_a_lower_loss() -> None:
    config = TrainConfig(batch_size=256)
    result = check(
        build_model,
        lambda: train_loader(config),
        optimizer=lambda params: make_optimizer(params, config),
        tier="pr",
    )
    assert result.passed, result.report()
