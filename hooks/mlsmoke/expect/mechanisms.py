"""The likely mechanism behind a failed expectation, from the evidence alone: how the
observed figure relates to the recorded one. Each rule names a bug class and holds for
data it has not seen (a ratio of ~255 is a 0-255 image scale wherever it shows up);
None when no rule fits, and the failure then stands on its figures."""

from __future__ import annotations

import math
from collections.abc import Sequence

PIXEL_SCALE = 255.0


def scale_change(recorded: float, observed: float) -> str | None:
    """For a spread-like figure (a std, a largest absolute value)."""
    if recorded <= 0 or observed <= 0 or not math.isfinite(observed):
        return None
    ratio = observed / recorded
    if PIXEL_SCALE / 2 <= ratio <= PIXEL_SCALE * 2:
        return (
            f"normalization removed: values ~{ratio:.0f}x the recorded ones"
            " (pixels in 0-255 where 0-1 was meant)"
        )
    if PIXEL_SCALE / 2 <= 1 / ratio <= PIXEL_SCALE * 2:
        return (
            f"normalization applied twice: values ~1/{1 / ratio:.0f} of the recorded"
            " ones (divided by 255 twice)"
        )
    if ratio >= 8 or ratio <= 1 / 8:
        times = f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.3g}"
        return f"the scale changed ~{times}x: a normalization removed or changed"
    return None


def standardization_change(
    recorded_mean: float, recorded_std: float, observed_mean: float, observed_std: float
) -> str | None:
    standardized = abs(recorded_mean) <= 0.5 * recorded_std and (
        0.3 <= recorded_std <= 3
    )
    if standardized and abs(observed_mean) > 2 * max(observed_std, 1e-12):
        return (
            "standardization removed: the mean is no longer ~0 and the std no longer"
            " ~1 ((x - mean) / std not applied)"
        )
    return scale_change(recorded_std, observed_std)


def label_shift(recorded: Sequence[int], observed: Sequence[int]) -> str | None:
    """For an integer range (min, max) of classes."""
    low, high = recorded
    seen_low, seen_high = observed
    if (seen_low, seen_high) == (low + 1, high + 1) or (
        seen_low > low and seen_high == high + 1
    ):
        return "labels are 1-based: class ids moved up by one (0-based was recorded)"
    if (seen_low, seen_high) == (low - 1, high - 1) or (
        seen_low == low - 1 and seen_high < high
    ):
        return "labels moved down by one (a 1-based to 0-based change applied twice?)"
    return None


def range_change(
    low: float, high: float, seen_low: float, seen_high: float
) -> str | None:
    """For a float range: a scale change read from the largest absolute values."""
    recorded = max(abs(low), abs(high))
    observed = max(abs(seen_low), abs(seen_high))
    return scale_change(recorded, observed)


def shape_change(pattern: Sequence[object], shape: Sequence[int]) -> str | None:
    fixed = [d for d in pattern[1:] if isinstance(d, int)]
    seen = list(shape[1:])
    if len(fixed) == len(seen) == len(pattern) - 1 and fixed != seen:
        if sorted(fixed) == sorted(seen):
            if fixed[0] <= 4 and seen[-1] == fixed[0]:
                return "images in HWC order where CHW was meant (channels moved last)"
            if seen[0] <= 4 and fixed[-1] == seen[0]:
                return "images in CHW order where HWC was meant (channels moved first)"
            return "dimensions permuted (a transpose or permute added or removed)"
        changed = [i for i, (a, b) in enumerate(zip(fixed, seen)) if a != b]
        if changed == [len(fixed) - 1] and len(fixed) == 1:
            return (
                "the sequence length changed (a tokenizer's max_length or a block size)"
            )
    if len(seen) != len(pattern) - 1:
        return "the number of dimensions changed (a squeeze, unsqueeze or flatten)"
    return None


def dtype_change(recorded: str, observed: str) -> str:
    if observed == "float64":
        return (
            "a float64 field: NumPy data converted without .float() (twice the"
            " memory, and a dtype the model was not built for)"
        )
    if recorded.startswith("int") and observed.startswith("float"):
        return "integer ids or labels became floats (a cast, or a collate of floats)"
    if recorded.startswith("float") and observed.startswith(("int", "uint")):
        return (
            "float values became integers: a ToTensor/scale step removed (raw pixels)"
        )
    return f"the dtype changed from {recorded} to {observed}"


def label_width_change(classes: int, width: int, marked: Sequence[int] | None) -> str:
    """For a label field (one column per class) whose width is no longer the
    recorded number of classes; ``marked``: the columns some row's class is in."""
    if marked is not None and width == classes + 1 and 0 not in marked:
        return (
            "labels are 1-based: the label field is one column wider and its"
            " column 0 is never a class"
        )
    if marked and width == max(marked) + 1:
        return (
            f"the width follows the batch's largest class id ({width} columns):"
            " F.one_hot without num_classes"
        )
    return (
        f"the number of classes changed ({classes} -> {width}): a class list,"
        " num_classes or the output width changed"
    )


def class_ids_past_width(width: int, seen_low: int, seen_high: int) -> str:
    """For class ids that a label field of ``width`` columns no longer marks."""
    if seen_high == width and seen_low >= 1:
        return (
            f"labels are 1-based: class id {width} is past the {width}-wide label"
            " field"
        )
    if seen_high >= width or seen_low < 0:
        return (
            f"class ids past the label field's width ({seen_low}..{seen_high} for"
            f" {width} classes): classes added to the ids but not to the targets"
        )
    return (
        "the label field no longer marks each sample's class id (built from other"
        " labels, or the two fields shuffled apart)"
    )


def class_ids_past_outputs(outputs: int, recorded: int, low: int, high: int) -> str:
    """For class ids at or past the number of the model's outputs."""
    seen = f"class ids reach {high}, the model has {outputs} outputs"
    if outputs < recorded:
        return (
            f"{seen}: its head narrowed (recorded with {recorded}); num_classes or"
            " the head's out_features changed"
        )
    if high == outputs and low >= 1:
        return f"{seen}: labels are 1-based (0-based was recorded)"
    return f"{seen}: classes added to the data but not to the model's head"


def token_ids_past_vocabulary(rows: int, recorded: int, low: int, high: int) -> str:
    """For token ids at or past the rows of the embedding they are looked up in."""
    seen = f"token ids reach {high}, the embedding has {rows} rows"
    if rows < recorded:
        return (
            f"{seen}: the model's vocabulary shrank (recorded with {recorded});"
            " vocab_size changed in its config"
        )
    return (
        f"{seen}: the tokenizer's vocabulary outgrew the model's (tokens added"
        " without resizing the embedding, or another tokenizer)"
    )


def target_width_change(outputs: int, recorded: int, columns: int | None) -> str:
    """For a per-class target no longer as wide as the model's outputs."""
    seen = f"the target has {columns} columns, the model has {outputs} outputs"
    if outputs != recorded:
        return (
            f"{seen}: the model's head changed (recorded with {recorded});"
            " num_classes or the head's out_features changed"
        )
    return f"{seen}: the target's classes changed (a class list, or num_classes)"
