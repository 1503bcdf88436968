"""The expectation kinds, one module each, by their name in the suite file."""

from __future__ import annotations

from types import ModuleType

from mlsmoke.expect.kinds import (
    class_ids,
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
    target_width,
    token_ids,
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
        class_ids,
        token_ids,
        target_width,
        distinct_classes,
        duplicates,
        constant_feature,
        leakage,
    )
}

# The kinds whose check reads the model's widths (``model_probe.py``): a suite without
# them never builds the model.
MODEL_KINDS = (class_ids.KIND, token_ids.KIND, target_width.KIND)
