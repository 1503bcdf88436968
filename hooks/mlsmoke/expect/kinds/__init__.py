"""The expectation kinds, one module each, by their name in the suite file."""

from __future__ import annotations

from types import ModuleType

from mlsmoke.expect.kinds import (
    constant_feature,
    distinct_classes,
    dtype,
    duplicates,
    finite,
    label_width,
    leakage,
    mask_covers,
    mean_std,
    padding_fraction,
    padding_side,
    presence,
    shape,
    shifted_target,
    value_range,
)

KINDS: dict[str, ModuleType] = {
    module.KIND: module
    for module in (
        presence,
        dtype,
        shape,
        finite,
        value_range,
        mean_std,
        padding_fraction,
        padding_side,
        mask_covers,
        shifted_target,
        label_width,
        distinct_classes,
        duplicates,
        constant_feature,
        leakage,
    )
}
