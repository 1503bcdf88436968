"""A probe ends once its answer is clear, and never before its first third."""

from __future__ import annotations

import math

import pytest
from overfit_models import MLP, mlp_batch, mlp_loss

from mlsmoke.overfit.process.settings import DEFAULT_LR
from mlsmoke.overfit.training.engine import train
from mlsmoke.overfit.training.optimizers import optimizer_factory
from mlsmoke.overfit.verdict.probe_stops import hopeless_after_a_third, is_hopeless

TARGET = 0.05


def decaying(steps: int, rate: float, start: float = 2.0, floor: float = 0.0):
    return [floor + (start - floor) * math.exp(-rate * t) for t in range(steps + 1)]


@pytest.mark.parametrize(
    ("losses", "length", "hopeless"),
    [
        ([2.0] * 61, 180, True),  # flat past its third
        ([2.0 + 0.01 * t for t in range(61)], 180, True),  # rising
        (decaying(60, 1e-4), 180, True),  # would need far more than 3x its steps
        (decaying(60, 0.03), 180, False),  # on its way: reaches the target in time
        (decaying(60, 0.3, floor=0.6), 180, True),  # settled at a floor above it
        ([2.0] * 59, 180, False),  # flat, but within its first third
        ([2.0] * 11, 12, False),  # a probe shorter than the least it always takes
        ([2.0] * 60 + [math.nan], 180, False),  # the engine stops there itself
    ],
    ids=[
        "flat",
        "rising",
        "far-too-slow",
        "on-its-way",
        "floor",
        "first-third",
        "shortest",
        "non-finite",
    ],
)
def test_a_probe_is_hopeless_only_past_its_third(losses, length, hopeless):
    assert is_hopeless(losses, TARGET, length) is hopeless


def test_no_target_never_stops_early():
    assert not is_hopeless([2.0] * 100, None, 120)


def _train(lr: float, stop_early=None):
    return train(
        MLP,
        mlp_batch,
        mlp_loss,
        optimizer_factory("adam", None, DEFAULT_LR["adam"]),
        lr=lr,
        max_steps=150,
        target_loss=None,
        target_ratio=0.05,
        device="cpu",
        timeout=60,
        seed=0,
        stop_early=stop_early,
    )


def test_the_engine_ends_a_hopeless_probe_and_keeps_a_memorizing_one():
    rule = hopeless_after_a_third(150)
    crawling = _train(1e-7, rule)
    assert 50 <= crawling.steps < 150 and not crawling.reached
    memorizing = _train(3e-3, rule)
    assert memorizing.reached
    assert memorizing.losses == _train(3e-3).losses  # the rule changed nothing
