"""Unit tests: shapes, the loss at init, and gradients reaching every parameter."""

from __future__ import annotations

import math

import pytest
import torch

from {{ cookiecutter.package_name }} import (
    Classifier,
    ClassifierConfig,
    build_model,
    example_batch,
)


@pytest.mark.parametrize("batch_size", [1, 7, 32])
def test_logits_have_one_row_per_example(batch_size: int) -> None:
    config = ClassifierConfig()
    logits, loss = Classifier(config)(torch.randn(batch_size, config.n_features))
    assert logits.shape == (batch_size, config.n_classes)
    assert loss is None


def test_loss_at_init_is_near_log_of_the_class_count() -> None:
    torch.manual_seed(0)
    model = build_model()
    x, y = example_batch()
    _, loss = model(x, y)
    assert loss.item() == pytest.approx(math.log(model.config.n_classes), rel=0.25)


def test_every_parameter_gets_a_gradient() -> None:
    model = build_model()
    _, loss = model(*example_batch())
    loss.backward()
    missing = [name for name, p in model.named_parameters() if p.grad is None]
    assert missing == []


def test_examples_do_not_leak_into_each_other() -> None:
    model = build_model().eval()
    x, _ = example_batch(batch_size=8)
    x.requires_grad_(True)
    logits, _ = model(x)
    logits[3].sum().backward()
    leaked = x.grad.abs().sum(dim=1)  # (B,): gradient reaching each example
    assert leaked[3] > 0
    assert torch.count_nonzero(leaked) == 1
