"""A target in another form than the loss builds: argmax a one-hot field, one-hot an
index field."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from mlsmoke.overfit.verdict.repairs.repair import (
    SHAPE_ERROR,
    Context,
    Repair,
    integral,
    spelled,
)

_SHAPE_ADVICE = ("check the target's shape",)


def propose(name: str, value: torch.Tensor, context: Context) -> Iterator[Repair]:
    field = spelled(name)
    if _one_hot(value):
        yield Repair(name, SHAPE_ERROR, f"{field}.argmax(-1)",
                     lambda t: t.argmax(-1), advice=_SHAPE_ADVICE,
                     topic="shape")  # fmt: skip
    width = context.width
    if (
        width is not None
        and context.indexes_output(value)
        and integral(value)
        and value.dtype != torch.bool
        and value.numel()
        and int(value.min()) >= 0
        and int(value.max()) < width
    ):
        yield Repair(
            name,
            SHAPE_ERROR,
            f"F.one_hot({field}, {width}).float()",
            lambda t: torch.nn.functional.one_hot(t.long(), width).float(),
            advice=_SHAPE_ADVICE,
            topic="shape",
        )


def _one_hot(value: torch.Tensor) -> bool:
    """Rows of zeros with a single one along the last dimension."""
    if value.dim() < 2 or value.shape[-1] < 2 or value.numel() == 0:
        return False
    if value.dtype == torch.bool or value.is_complex():
        return False
    if not bool(((value == 0) | (value == 1)).all()):
        return False
    return bool((value.sum(-1) == 1).all())
