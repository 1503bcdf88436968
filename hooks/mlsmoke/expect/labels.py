"""Label fields as wide as the number of classes, as one batch shows them (torch side).

A label field is a ``(B, C)`` tensor of per-class targets: one-hot rows, distributions
(label smoothing, mixup: values in [0, 1] summing to 1), or float multi-hot rows (every
value 0 or 1, at least one 1, as ``BCEWithLogitsLoss`` takes). Integer 0/1 rows with
more than one 1 are left out: they are attention masks far more often than labels.

Its figures are its width and the columns that are some row's class (the row's
largest value); a ``label`` relation says whether an integer ``(B,)`` field of class
ids stays within the width and names, in every row, a class the label field marks.
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.expect.observe_limits import IGNORE_INDEX

MAX_LISTED_CLASSES = 1024  # wider label fields keep their width only
SUM_TOLERANCE = 1e-3


def is_label_field(tensor: torch.Tensor) -> bool:
    if tensor.dim() != 2 or tensor.shape[1] < 2 or tensor.shape[0] == 0:
        return False
    if tensor.is_complex() or tensor.dtype == torch.bool:
        return False
    values = tensor.double()
    if not bool(torch.isfinite(values).all()):
        return False
    if bool((values < 0).any()) or bool((values > 1).any()):
        return False
    if bool(((values.sum(dim=1) - 1).abs() <= SUM_TOLERANCE).all()):
        return True
    binary = bool(((values == 0) | (values == 1)).all())
    return (
        tensor.is_floating_point() and binary and bool(values.max(dim=1).values.all())
    )


def label_figures(tensor: torch.Tensor) -> dict[str, Any]:
    """``{"width", "classes"}``: classes lists the columns that are some row's class
    (None past MAX_LISTED_CLASSES)."""
    width = int(tensor.shape[1])
    figures: dict[str, Any] = {"width": width, "classes": None}
    if width <= MAX_LISTED_CLASSES:
        values = tensor.double()
        marked = values == values.max(dim=1, keepdim=True).values  # (B, C)
        figures["classes"] = [int(c) for c in marked.any(dim=0).nonzero().flatten()]
    return figures


def label_relations(fields: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
    """``label`` relations [label field, class ids]: held when every counted id is
    within the label field's width and is a class its row marks."""
    targets = {name: t for name, t in fields.items() if is_label_field(t)}
    ids = {
        name: t
        for name, t in fields.items()
        if t.dim() == 1 and not t.is_floating_point() and t.dtype != torch.bool
    }
    found = []
    for target_name, target in targets.items():
        for ids_name, classes in ids.items():
            if classes.shape[0] == target.shape[0]:
                found.append(
                    {
                        "kind": "label",
                        "fields": [target_name, ids_name],
                        "holds": _marks(target, classes.long()),
                    }
                )
    return found


def _marks(target: torch.Tensor, classes: torch.Tensor) -> bool:
    counted = classes != IGNORE_INDEX
    if not bool(counted.any()):
        return False
    ids, rows = classes[counted], target.double()[counted]
    if bool((ids < 0).any()) or bool((ids >= target.shape[1]).any()):
        return False
    marked = rows.gather(1, ids[:, None]).squeeze(1)  # (n,) each row's value at its id
    return bool((marked == rows.max(dim=1).values).all())
