"""Casts: whole-number floats to int64, integers to float, a 0/1 integer mask to
bool."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from mlsmoke.overfit.verdict.repairs.repair import (
    DATA_ERROR,
    Context,
    Repair,
    integral,
    spelled,
    whole_numbers,
)


def propose(name: str, value: torch.Tensor, context: Context) -> Iterator[Repair]:
    field = spelled(name)
    if whole_numbers(value):
        yield _cast(name, f"{field}.long()", torch.long, ("int64", "torch.long"))
    if integral(value) and value.dtype != torch.bool:
        if value.numel() and int(value.min()) >= 0 and int(value.max()) <= 1:
            yield _cast(name, f"{field}.bool()", torch.bool)
        yield _cast(name, f"{field}.float()", torch.float32, ("inputs are float",))
    if value.dtype == torch.bool:
        yield _cast(name, f"{field}.float()", torch.float32)


def _cast(
    name: str, written: str, dtype: torch.dtype, advice: tuple[str, ...] = ()
) -> Repair:
    return Repair(
        name,
        DATA_ERROR,
        written,
        lambda tensor: tensor.to(dtype),
        advice=advice,
        becomes=str(dtype).replace("torch.", ""),
    )
