"""What the batch's fields show, read from their values: class targets stored as
floats, ids beyond a lookup table, the fields an error message names. Pure functions
of ``(name, value)`` pairs, shared by the data diagnoses."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import torch

from mlsmoke.overfit.verdict import forward_probes


def is_target_name(name: str) -> bool:
    """A field that holds targets: ``labels``, ``y``, ``start_positions``..."""
    last = name.lower().rsplit(".", 1)[-1]
    return last in forward_probes.TARGET_NAMES or last.endswith(
        ("labels", "_positions")
    )


def float_class_targets(fields: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Target fields that are float tensors of whole numbers: class indices stored
    as floats (a loss or a library head then takes them for probabilities or
    regression values)."""
    return [
        (name, value)
        for name, value in fields
        if is_target_name(name) and _whole_floats(value)
    ]


def whole_float_fields(fields: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Float tensors of whole numbers, whatever their name: where torch says a target
    has the wrong dtype, these are the class indices stored as floats."""
    return [(name, value) for name, value in fields if _whole_floats(value)]


def ignored_targets(fields: Iterable[tuple[str, Any]]) -> list[tuple[str, int]]:
    """Integer target fields in which every value is negative: no class index, only
    the ignore index (-100) a loss skips; with their value."""
    found = []
    for name, value in fields:
        if is_target_name(name) and is_integer_tensor(value) and value.numel():
            if bool((value < 0).all()):
                found.append((name, int(value.max())))
    return found


def fields_beyond(
    fields: Iterable[tuple[str, Any]], size: int, index: int | None = None
) -> list[tuple[str, int]]:
    """Integer fields holding an id at or above ``size`` (a lookup table's rows),
    with their largest value; the likeliest first: holding the failing ``index``,
    then the largest share of ids beyond the table."""
    found = []
    for name, value in fields:
        if is_integer_tensor(value) and value.numel():
            beyond = value >= size
            if bool(beyond.any()):
                holds_index = index is not None and bool((value == index).any())
                share = float(beyond.float().mean())
                found.append((holds_index, share, name, int(value.max())))
    found.sort(key=lambda row: (row[0], row[1]), reverse=True)
    return [(name, largest) for _, _, name, largest in found]


def unstacked_samples(batch: Any) -> int | None:
    """How many samples a batch holds that was never collated: a list or tuple of
    three or more per-sample records (tuples, lists or mappings) of one structure,
    where a collated batch holds one stacked tensor per field. None otherwise."""
    if not isinstance(batch, (list, tuple)) or len(batch) < 3:
        return None
    shapes = {_record_shape(item) for item in batch}
    if len(shapes) != 1 or None in shapes:
        return None
    return len(batch)


def _record_shape(item: Any) -> tuple | None:
    if isinstance(item, Mapping):
        return ("mapping", tuple(sorted(map(str, item))))
    if isinstance(item, (list, tuple)) and item:
        return ("sequence", len(item))
    return None


def sequences_longer_than(
    fields: Iterable[tuple[str, Any]], size: int, index: int
) -> list[tuple[str, int]]:
    """Fields whose sequences (dimension 1) are longer than a table of ``size``
    positions, and long enough to hold the failing ``index``: the positions ran
    out, whatever values the fields hold."""
    return [
        (name, int(value.shape[1]))
        for name, value in fields
        if isinstance(value, torch.Tensor)
        and value.dim() >= 2
        and size < int(value.shape[1])
        and index < int(value.shape[1])
    ]


def fields_named_in(text: str, names: Iterable[str]) -> list[str]:
    """The field names ``text`` mentions as whole words."""
    return [n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]


def _whole_floats(value: Any) -> bool:
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return False
    if value.numel() == 0 or not bool(torch.isfinite(value).all()):
        return False
    return bool(torch.equal(value, value.round()))


def is_integer_tensor(value: Any) -> bool:
    """A tensor of integers (not booleans): what class indices and ids are held in."""
    return (
        isinstance(value, torch.Tensor)
        and not value.is_floating_point()
        and not value.is_complex()
        and value.dtype != torch.bool
    )
