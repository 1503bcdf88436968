"""The training recipe: the lr schedule's shape, an optimizer over every parameter."""

from __future__ import annotations

import pytest

from {{ cookiecutter.package_name }} import (
    TrainConfig,
    build_model,
    lr_factor,
    make_optimizer,
)


def test_schedule_warms_up_to_the_peak_then_decays_to_the_floor() -> None:
    config = TrainConfig()
    factors = [lr_factor(step, config) for step in range(config.steps + 10)]
    assert factors.index(max(factors)) == config.warmup_steps
    assert max(factors) == pytest.approx(1.0)
    assert min(factors) > 0  # an lr of 0 trains nothing
    assert factors[-1] == pytest.approx(config.min_lr_ratio)


def test_optimizer_trains_every_parameter_at_the_configured_lr() -> None:
    model = build_model()
    config = TrainConfig(warmup_steps=0)
    optimizer, scheduler = make_optimizer(model.parameters(), config)
    trained = [p for group in optimizer.param_groups for p in group["params"]]
    assert len(trained) == len(list(model.parameters()))
    assert scheduler.get_last_lr() == [pytest.approx(config.lr)]
