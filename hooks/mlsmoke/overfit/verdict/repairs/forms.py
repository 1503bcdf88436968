"""A target in another form than the loss builds: argmax a one-hot field (one-hot
rows, or a class map with one channel per class made one channel of class ids),
one-hot an index field."""

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
from mlsmoke.overfit.verdict.repairs.signs import one_hot

_SHAPE_ADVICE = ("check the target's shape",)


def propose(name: str, value: torch.Tensor, context: Context) -> Iterator[Repair]:
    field = spelled(name)
    if one_hot(value):
        yield Repair(name, SHAPE_ERROR, f"{field}.argmax(-1)",
                     lambda t: t.argmax(-1), advice=_SHAPE_ADVICE,
                     topic="shape")  # fmt: skip
    elif one_hot(value, 1):
        for written, change in (
            (f"{field}.argmax(1, keepdim=True)", lambda t: t.argmax(1, keepdim=True)),
            (f"{field}.argmax(1)", lambda t: t.argmax(1)),
        ):
            yield Repair(name, SHAPE_ERROR, written, change, advice=_SHAPE_ADVICE,
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
