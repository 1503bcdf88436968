"""The mechanism rules on plain figures: each holds for values it was not tuned on."""

from __future__ import annotations

import pytest

from mlsmoke.expect import mechanisms


@pytest.mark.parametrize(
    "recorded,observed,words",
    [
        (0.29, 74.0, "normalization removed"),
        (1.0, 300.0, "normalization removed"),
        (0.25, 0.001, "normalization applied twice"),
        (1.0, 20.0, "the scale changed"),
        (0.4, 409.6, "the scale changed ~1024x: a normalization removed"),
        (1.0, 0.01, "the scale changed ~0.01x"),
        (1.0, 1.5, None),
        (1.0, 0.7, None),
    ],
)
def test_scale_changes(recorded, observed, words):
    found = mechanisms.scale_change(recorded, observed)
    assert (found is None) if words is None else (words in found)


def test_a_standardized_field_that_is_no_longer_says_so():
    assert "standardization removed" in mechanisms.standardization_change(
        0.0, 1.0, 50.0, 10.0
    )
    assert mechanisms.standardization_change(0.0, 1.0, 0.2, 1.1) is None


@pytest.mark.parametrize(
    "recorded,observed,words",
    [
        ((0, 9), (1, 10), "1-based"),
        ((0, 1), (1, 2), "1-based"),
        ((0, 9), (3, 10), "1-based"),
        ((1, 10), (0, 9), "moved down by one"),
        ((0, 9), (0, 12), None),
    ],
)
def test_label_shifts(recorded, observed, words):
    found = mechanisms.label_shift(recorded, observed)
    assert (found is None) if words is None else (words in found)


@pytest.mark.parametrize(
    "pattern,shape,words",
    [
        (["B", 3, 32, 32], [8, 32, 32, 3], "HWC order where CHW"),
        (["B", 64, 64, 1], [8, 1, 64, 64], "CHW order where HWC"),
        (["B", 128], [8, 256], "sequence length"),
        (["B", 3, 8, 8], [8, 3, 64], "number of dimensions"),
        (["B", 10, 20], [8, 20, 10], "permuted"),
    ],
)
def test_shape_changes(pattern, shape, words):
    assert words in mechanisms.shape_change(pattern, shape)


def test_dtype_changes():
    assert "float64" in mechanisms.dtype_change("float32", "float64")
    assert "raw pixels" in mechanisms.dtype_change("float32", "uint8")
    assert "int32" in mechanisms.dtype_change("int64", "int32")
