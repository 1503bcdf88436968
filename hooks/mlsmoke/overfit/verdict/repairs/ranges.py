"""Integers moved into the range the model's output implies: 1-based ids shifted to
0-based, and an ignore value (255, -1) mapped to the loss's ``ignore_index``."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from mlsmoke.overfit.verdict.diagnoses._tensor_evidence import (
    IGNORE_INDEX,
    Output,
    classes_indexed,
)
from mlsmoke.overfit.verdict.repairs.repair import (
    LABEL_RANGE_ERROR,
    Context,
    Repair,
    spelled,
)

_RANGE_ADVICE = ("map labels to 0..C-1", "binary losses take targets")


def propose(name: str, value: torch.Tensor, context: Context) -> Iterator[Repair]:
    """Only for a field shaped as class indices of the output: values of a field of
    another shape (pixels, ids of a table) are not the output's classes."""
    width = classes_indexed(value, Output(context.width, context.output_shape))
    if width is None or value.numel() == 0:
        return
    low, high = int(value.min()), int(value.max())
    if 0 <= low and high < width:
        return  # already in range: nothing to move
    field = spelled(name)
    ignore = _ignore_value(value, width)
    if ignore is not None:
        yield Repair(
            name,
            LABEL_RANGE_ERROR,
            f"{field}.masked_fill({field} == {ignore}, {IGNORE_INDEX})",
            lambda t: t.masked_fill(t == ignore, IGNORE_INDEX),
            advice=_RANGE_ADVICE,
            topic="range",
        )
    if low >= 1 and high - low < width:
        yield Repair(
            name,
            LABEL_RANGE_ERROR,
            f"{field} - {low}",
            lambda t: t - low,
            advice=_RANGE_ADVICE,
            meaning=_shift_meaning(low, high, width),
            topic="range",
        )


def _ignore_value(value: torch.Tensor, width: int) -> int | None:
    """The one value outside 0..width-1 when every other value is inside it, and it is
    not the next class (``width`` itself, which says the output is one class short): a
    marker for "no label" (255 in segmentation masks, -1), not a class."""
    outside = value[(value < 0) | (value >= width)]
    if outside.numel() == 0 or outside.numel() == value.numel():
        return None
    markers = outside.unique()
    if markers.numel() != 1:
        return None
    marker = int(markers[0])
    return None if marker in (IGNORE_INDEX, width) else marker


def _shift_meaning(low: int, high: int, width: int) -> str:
    """Empty when the values fill 1..C exactly against C outputs (1-based ids, which a
    shift fixes); otherwise why a shift that runs is only a hypothesis."""
    if low == 1 and high == width:
        return ""
    return (
        f"the values are {low}..{high} against {width} outputs (classes"
        f" 0..{width - 1}): shifting by {low} makes the step run, but maps"
        f" {low} to class 0; it may train on the wrong classes"
    )
