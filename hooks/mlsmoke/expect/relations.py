"""Relations between the fields of one batch, for the suite to keep when they hold in
every recorded batch:

- ``shift``: two integer fields of one shape, the second the first moved one position
  left (a language model's target: ``y[:, t] == x[:, t + 1]``), or equal to it;
- ``mask``: a 0/1 field that is 0 exactly where another field of its shape holds its
  padding value (the value found at every masked position, and nowhere else).

Positions holding the loss's ignore index (-100) are skipped in both.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import torch

from mlsmoke.expect.observe_limits import IGNORE_INDEX


def relations(fields: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
    integers = {
        name: tensor
        for name, tensor in fields.items()
        if _is_integer(tensor) and tensor.dim() >= 2 and tensor.shape[-1] >= 2
    }
    found = []
    for (a, x), (b, y) in permutations(integers.items(), 2):
        if x.shape != y.shape:
            continue
        if a < b:  # each unordered pair once for "equal"
            found.append({"kind": "equal", "fields": [a, b], "holds": _equal(x, y)})
        found.append({"kind": "shift", "fields": [a, b], "holds": _shifted(x, y)})
        if is_mask(x) and not is_mask(y):
            found.append(_mask_covers(a, x, b, y))
    return found


def _is_integer(tensor: torch.Tensor) -> bool:
    return not tensor.is_floating_point() and not tensor.is_complex()


def is_mask(tensor: torch.Tensor) -> bool:
    if tensor.is_floating_point() or tensor.is_complex():
        return False
    return tensor.dtype == torch.bool or bool(((tensor == 0) | (tensor == 1)).all())


def _equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    counted = y != IGNORE_INDEX
    return bool(counted.any()) and bool((x[counted] == y[counted]).all())


def _shifted(x: torch.Tensor, y: torch.Tensor) -> bool:
    """``y`` is ``x`` moved one position left along the last dimension."""
    ahead, target = x[..., 1:], y[..., :-1]
    counted = target != IGNORE_INDEX
    if not bool(counted.any()) or _equal(x, y):
        return False
    return bool((ahead[counted] == target[counted]).all())


def _mask_covers(
    mask_name: str, mask: torch.Tensor, name: str, values: torch.Tensor
) -> dict[str, Any]:
    masked = mask.long() == 0
    relation: dict[str, Any] = {"kind": "mask", "fields": [mask_name, name]}
    if not bool(masked.any()):
        return {**relation, "holds": None}  # no padding in this batch: no evidence
    padding = torch.unique(values[masked])
    holds = padding.numel() == 1 and not bool((values[~masked] == padding[0]).any())
    return {**relation, "holds": holds}
