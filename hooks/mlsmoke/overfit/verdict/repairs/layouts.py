"""A field laid out otherwise than the model takes it: strided (a slice) made
contiguous, channels last moved first, a size-1 dimension added or dropped."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from mlsmoke.overfit.verdict.repairs.repair import SHAPE_ERROR, Context, Repair, spelled

_CHANNELS = (1, 2, 3, 4)  # the channel counts of images and their masks
_SHAPE_ADVICE = ("check the target's shape", "annotate shapes")


def propose(name: str, value: torch.Tensor, context: Context) -> Iterator[Repair]:
    field = spelled(name)
    if not value.is_contiguous():
        yield Repair(name, SHAPE_ERROR, f"{field}.contiguous()",
                     lambda t: t.contiguous(), advice=_SHAPE_ADVICE,
                     topic="contiguity")  # fmt: skip
    if (
        value.dim() == 4
        and value.shape[-1] in _CHANNELS
        and value.shape[1] not in _CHANNELS
    ):
        yield _layout(name, f"{field}.permute(0, 3, 1, 2)",
                      lambda t: t.permute(0, 3, 1, 2))  # fmt: skip
    if value.dim() >= 2 and value.shape[-1] == 1:
        yield _layout(name, f"{field}.squeeze(-1)", lambda t: t.squeeze(-1))
    if value.dim() == 1:
        yield _layout(name, f"{field}.unsqueeze(1)", lambda t: t.unsqueeze(1))


def _layout(name: str, written: str, change) -> Repair:
    return Repair(name, SHAPE_ERROR, written, change, advice=_SHAPE_ADVICE,
                  topic="shape")  # fmt: skip
