"""The batch is what the model takes: float points, class indices in range, balanced."""

from __future__ import annotations

import torch

from {{ cookiecutter.package_name }} import (
    ClassifierConfig,
    example_batch,
    spirals,
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
