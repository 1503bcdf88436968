"""A label field as wide as the number of classes: a one-hot target that no longer has
one column per class, or class ids past its width, is caught with its mechanism named;
label smoothing, other seeds and batch sizes pass (and harmless_test.py counts this
loader's false alarms with the others')."""

from __future__ import annotations

import expect_loaders as loaders
import pytest
import torch
from conftest import failures_of

from mlsmoke.expect.labels import is_label_field


@pytest.fixture
def suite(suites):
    return suites["labels"]


def test_the_relation_is_recorded_with_its_class_ids(suite):
    (entry,) = [e for e in suite.expectations if e["kind"] == "label_width"]
    assert (entry["field"], entry["classes"], entry["ids"]) == ("target", 10, "label")
    assert "every column a class" in entry["from"]


BUGS = [
    # (changed loader, field, expected mechanism)
    (lambda: loaders.one_hot(num_classes=None, one_based=True), "target",
     "labels are 1-based: the label field is one column wider"),
    (lambda: loaders.one_hot(num_classes=None, batch=4), "target",
     "F.one_hot without num_classes"),
    (lambda: loaders.one_hot(num_classes=12), "target",
     "the number of classes changed (10 -> 12)"),
    (lambda: loaders.one_hot(ids_one_based=True), "label",
     "labels are 1-based: class id 10 is past the 10-wide label field"),
]  # fmt: skip


@pytest.mark.parametrize("loader,field,mechanism", BUGS)
def test_a_label_field_no_longer_as_wide_as_the_classes_is_caught(
    suite, loader, field, mechanism
):
    failures = failures_of(suite, loader())
    caught = [f for f in failures if (f.field, f.kind) == (field, "label_width")]
    assert caught, [(f.field, f.kind, f.mechanism) for f in failures]
    assert mechanism in caught[0].mechanism, caught[0]
    assert caught[0].batch is not None


def test_the_shape_failure_of_a_label_field_names_the_class_count(suite):
    failures = failures_of(suite, loaders.one_hot(num_classes=12))
    (shape,) = [f for f in failures if (f.field, f.kind) == ("target", "shape")]
    assert "number of classes changed" in shape.mechanism


@pytest.mark.parametrize(
    "loader",
    [
        lambda: loaders.one_hot(smoothing=0.1),
        lambda: loaders.one_hot(seed=3, batch=64),
        lambda: loaders.one_hot(seed=5, batch=4),
    ],
    ids=["label-smoothing", "seed-larger-batch", "seed-smaller-batch"],
)
def test_a_harmless_change_passes(suite, loader):
    assert failures_of(suite, loader()) == []


@pytest.mark.parametrize(
    "tensor,is_label",
    [
        (torch.eye(4)[[0, 2, 1]], True),  # one-hot rows
        (torch.tensor([[0.9, 0.05, 0.05], [0.2, 0.3, 0.5]]), True),  # distributions
        (torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), True),  # multi-hot
        (torch.tensor([[1, 1, 0], [1, 0, 0]]), False),  # an attention mask
        (torch.tensor([[0.5, -0.2], [0.1, 0.3]]), False),  # features
        (torch.tensor([[1.0, 0.0], [0.0, 0.0]]), False),  # a row with no class
    ],
)
def test_which_fields_are_label_fields(tensor, is_label):
    assert is_label_field(tensor) is is_label
