"""The batches are what the model takes: float points in the unit disc, class
indices in range, balanced, and the same for the same seed."""

from __future__ import annotations

import torch

from pathlib import Path

from mlsmoke.expect import check

from {{ cookiecutter.package_name }} import (
    ClassifierConfig,
    TrainConfig,
    example_batch,
    spirals,
    train_loader,
)


def test_example_batch_is_float_points_and_integer_labels() -> None:
    x, y = example_batch(batch_size=16)
    assert x.shape == (16, 2) and x.dtype == torch.float32
    assert y.shape == (16,) and y.dtype == torch.int64


def test_labels_cover_every_class_and_no_more() -> None:
    _, y = example_batch()
    assert set(y.tolist()) == set(range(ClassifierConfig().n_classes))


def test_same_seed_same_points() -> None:
    assert torch.equal(spirals(64, seed=3)[0], spirals(64, seed=3)[0])
    assert not torch.equal(spirals(64, seed=3)[0], spirals(64, seed=4)[0])


def test_loader_batches_are_full_and_mixed() -> None:
    config = TrainConfig(batch_size=32)
    batches = list(train_loader(config))
    assert len(batches) == config.n_train // config.batch_size
    x, y = batches[0]
    assert x.shape == (32, 2) and y.shape == (32,)
    assert len(set(y.tolist())) == ClassifierConfig().n_classes  # shuffled, not sorted


def test_the_loader_normalizes_the_readings() -> None:
    x, _ = next(iter(train_loader(TrainConfig(batch_size=64))))
    assert x.norm(dim=1).max() <= 1.0  # readings in millimetres reach ~1000


def test_same_seed_same_first_batch() -> None:
    first = next(iter(train_loader(TrainConfig(seed=5))))[0]
    assert torch.equal(first, next(iter(train_loader(TrainConfig(seed=5))))[0])
    assert not torch.equal(first, next(iter(train_loader(TrainConfig(seed=6))))[0])


def test_batches_meet_the_recorded_expectations() -> None:
    """expectations.json, recorded by `mlsmoke expect --record`: the same check as the
    data-expectations hook, on the batches of this process."""
    check(train_loader(), Path(__file__).parents[1] / "expectations.json")
