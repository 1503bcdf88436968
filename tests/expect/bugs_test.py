"""Each data bug of the field guide, on the kind of data it happens to, is caught with
its mechanism named; the suite was recorded from the same loader without the bug."""

from __future__ import annotations

import expect_loaders as loaders
import pytest
from conftest import failures_of

BUGS = [
    # (data, changed loader, field, kind, words of the mechanism)
    ("images", lambda: loaders.images(normalize=0), "[0]", "mean_std",
     "normalization removed: values ~255x"),
    ("images", lambda: loaders.images(normalize=0), "[0]", "value_range",
     "normalization removed"),
    ("images", lambda: loaders.images(normalize=2), "[0]", "mean_std",
     "normalization applied twice"),
    ("images", lambda: loaders.images(hwc=True), "[0]", "shape",
     "HWC order where CHW was meant"),
    ("images", lambda: loaders.images(nan=True), "[0]", "finite", "makes NaN"),
    ("images", lambda: loaders.images(float64=True), "[0]", "dtype",
     "a float64 field"),
    ("images", lambda: loaders.images(shuffle=False), "[1]", "distinct_classes",
     "shuffling turned off"),
    ("images", lambda: loaders.images(one_based=True), "[1]", "value_range",
     "labels are 1-based"),
    ("tokens", lambda: loaders.token_windows(shift=0), "[1]", "shifted_target",
     "the shift was lost"),
    ("tokens", lambda: loaders.token_windows(block=8), "[0]", "shape",
     "the sequence length changed"),
    ("tabular", lambda: loaders.tabular(standardize=False), "[0]", "mean_std",
     "standardization removed"),
    ("tabular", lambda: loaders.tabular(constant=True), "[0]", "constant_feature",
     "a feature left constant"),
    ("tabular", lambda: loaders.tabular(nan=True), "[0]", "finite", "makes NaN"),
    ("tabular", lambda: loaders.tabular(float64=True), "[0]", "dtype",
     "a float64 field"),
    ("encodings", lambda: loaders.encodings(side="left"), "attention_mask",
     "padding_side", "padding side changed (right -> left)"),
    ("encodings", lambda: loaders.encodings(max_length=16), "input_ids", "shape",
     "max_length"),
    ("encodings", lambda: loaders.encodings(labels_shifted=True), "labels",
     "shifted_target", "shifted in the data; the model shifts it again"),
    ("encodings", lambda: loaders.encodings(mask_off=True), "attention_mask",
     "padding_fraction", "the mask is all ones"),
]  # fmt: skip


@pytest.mark.parametrize(
    "data,loader,field,kind,mechanism",
    BUGS,
    ids=[f"{b[0]}-{b[3]}-{b[4].split(':')[0][:24]}" for b in BUGS],
)
def test_the_bug_is_caught_with_its_mechanism(
    suites, data, loader, field, kind, mechanism
):
    failures = failures_of(suites[data], loader())
    caught = [f for f in failures if (f.field, f.kind) == (field, kind)]
    assert caught, [(f.field, f.kind) for f in failures]
    assert mechanism in (caught[0].mechanism or ""), caught[0]
    assert caught[0].batch is not None or kind == "constant_feature"


def test_validation_samples_in_the_training_split_are_named_leakage(suites):
    failures = failures_of(
        suites["tabular"], loaders.tabular(), loaders.tabular_validation(leak=True)
    )
    assert [f.kind for f in failures] == ["leakage"]
    assert "validation samples leak into the training split" in failures[0].mechanism
    assert failures[0].sample is not None


def test_the_failure_names_the_sample_that_left_the_range(suites):
    failure = next(
        f
        for f in failures_of(suites["images"], loaders.images(one_based=True))
        if f.kind == "value_range"
    )
    assert failure.observed.endswith("..10") and failure.expected == "0..9"
    dataset = loaders.images(one_based=True)
    first = next(iter(dataset))
    assert int(first[1][failure.sample]) == 10
