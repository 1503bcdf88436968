"""What one batch shows, as plain JSON: per field its dtype, shape and value figures,
the relations between fields, and a content hash per sample. Runs where torch is (the
project's interpreter, or the caller's in the pytest API); everything after it,
inference and checking, is pure Python on these figures.

A field is a tensor inside the batch, named as its user reads it (``[0]``,
``input_ids``, ``graph.x``); a DataFrame's numeric columns are fields too.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

from mlsmoke.expect.draw import is_data_frame
from mlsmoke.expect.labels import is_label_field, label_figures, label_relations
from mlsmoke.expect.observe_limits import IGNORE_INDEX, MAX_CHANNELS, MAX_VALUE_SET
from mlsmoke.expect.relations import is_mask, relations
from mlsmoke.overfit.training.batch_objects import named_tensors


def batch_fields(batch: Any) -> dict[str, torch.Tensor]:
    """The batch's tensors by field name."""
    if is_data_frame(batch):
        return _frame_fields(batch)
    found = named_tensors(batch)
    return {name or "batch": tensor.detach() for name, tensor in found}


def _frame_fields(frame: Any) -> dict[str, torch.Tensor]:
    fields = {}
    for column in frame.columns:
        values = frame[column].to_numpy()
        if values.dtype.kind in "biuf":
            fields[str(column)] = torch.tensor(
                values
            )  # a copy: frames may be read-only
    return fields


def observe_batch(batch: Any) -> dict[str, Any]:
    """``{"fields": {name: figures}, "relations": [...], "samples": [hash...]}``."""
    fields = batch_fields(batch)
    return {
        "fields": {name: field_figures(tensor) for name, tensor in fields.items()},
        "relations": relations(fields) + label_relations(fields),
        "samples": sample_hashes(fields),
    }


def field_figures(tensor: torch.Tensor) -> dict[str, Any]:
    tensor = tensor.cpu()
    figures: dict[str, Any] = {
        "dtype": str(tensor.dtype).replace("torch.", ""),
        "shape": list(tensor.shape),
    }
    if tensor.numel() == 0:
        return figures
    if tensor.is_floating_point():
        figures.update(_float_figures(tensor))
    elif tensor.dtype != torch.bool and not tensor.is_complex():
        figures.update(_integer_figures(tensor))
    if tensor.dim() == 2 and is_mask(tensor):
        figures["mask"] = _mask_figures(tensor)
    if is_label_field(tensor):
        figures["label"] = label_figures(tensor)
    return figures


def _float_figures(tensor: torch.Tensor) -> dict[str, Any]:
    values = tensor.double()
    finite = torch.isfinite(values)
    figures: dict[str, Any] = {"nonfinite": int((~finite).sum())}
    if figures["nonfinite"]:
        figures["nonfinite_at"] = _first_sample(~finite)
    kept = values[finite]
    if kept.numel() == 0:
        return figures
    figures.update(_extremes(values, finite))
    figures["mean"], figures["std"] = float(kept.mean()), float(
        kept.std(unbiased=False)
    )
    if values.dim() >= 2 and values.shape[1] <= MAX_CHANNELS and bool(finite.all()):
        per = values.transpose(0, 1).reshape(values.shape[1], -1)
        figures["channels"] = {
            "mean": [float(v) for v in per.mean(dim=1)],
            "std": [float(v) for v in per.std(dim=1, unbiased=False)],
        }
    return figures


def _integer_figures(tensor: torch.Tensor) -> dict[str, Any]:
    values = tensor.long()
    ignored = values == IGNORE_INDEX
    figures: dict[str, Any] = {"ignored": float(ignored.double().mean())}
    counted = ~ignored
    if not bool(counted.any()):
        return figures
    figures.update(_extremes(values, counted))
    distinct = torch.unique(values[counted])
    figures["distinct"] = int(distinct.numel())
    if distinct.numel() <= MAX_VALUE_SET:
        figures["values"] = [int(v) for v in distinct]
    return figures


def _extremes(values: torch.Tensor, kept: torch.Tensor) -> dict[str, Any]:
    """min and max over the kept positions, and the sample each is in."""
    rows = values.reshape(values.shape[0], -1) if values.dim() else values.reshape(1, 1)
    kept = kept.reshape(rows.shape)
    big = float("inf") if rows.is_floating_point() else 2**62
    row_max = rows.masked_fill(~kept, -big).max(dim=1).values
    row_min = rows.masked_fill(~kept, big).min(dim=1).values
    at_max, at_min = int(row_max.argmax()), int(row_min.argmin())
    return {
        "min": _number(row_min[at_min]),
        "max": _number(row_max[at_max]),
        "min_at": at_min,
        "max_at": at_max,
    }


def _number(value: torch.Tensor) -> float | int:
    return float(value) if value.is_floating_point() else int(value)


def _first_sample(where: torch.Tensor) -> int:
    rows = where.reshape(where.shape[0] if where.dim() else 1, -1).any(dim=1)
    return int(rows.nonzero()[0, 0])


def _mask_figures(mask: torch.Tensor) -> dict[str, Any]:
    """The share of masked-out positions, and which side of each row they are on."""
    ones = mask.long()
    zeros = float((ones == 0).double().mean())
    return {"zeros": zeros, "side": padding_side(ones)}


def padding_side(mask: torch.Tensor) -> str:
    """ "right" when every row is ones then zeros, "left" when zeros then ones, "none"
    when nothing is masked, "mixed" otherwise."""
    if bool((mask == 1).all()):
        return "none"
    steps = mask[:, 1:] - mask[:, :-1]
    if bool((steps <= 0).all()):
        return "right"
    if bool((steps >= 0).all()):
        return "left"
    return "mixed"


def sample_hashes(fields: dict[str, torch.Tensor]) -> list[str]:
    """One hash per sample: the bytes of each field's row, for the fields whose first
    dimension is the batch's."""
    sizes = [t.shape[0] for t in fields.values() if t.dim() > 0]
    if not sizes:
        return []
    size = max(set(sizes), key=sizes.count)
    rows = [
        t.cpu().contiguous()
        for t in fields.values()
        if t.dim() > 0 and t.shape[0] == size
    ]
    hashes = []
    for index in range(size):
        digest = hashlib.blake2b(digest_size=8)
        for tensor in rows:
            digest.update(_row_bytes(tensor[index]))
        hashes.append(digest.hexdigest())
    return hashes


def _row_bytes(row: torch.Tensor) -> bytes:
    try:
        return row.flatten().view(torch.uint8).numpy().tobytes()
    except (RuntimeError, TypeError):  # no numpy in the project's environment
        return repr(row.flatten().tolist()).encode()
