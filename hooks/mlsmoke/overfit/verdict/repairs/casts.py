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
        yield Repair(name, DATA_ERROR, f"{field}.long()", _to(torch.long),
                     advice=("int64", "torch.long"))  # fmt: skip
    if integral(value) and value.dtype != torch.bool:
        if value.numel() and int(value.min()) >= 0 and int(value.max()) <= 1:
            yield Repair(name, DATA_ERROR, f"{field}.bool()", _to(torch.bool))
        yield Repair(name, DATA_ERROR, f"{field}.float()", _to(torch.float32),
                     advice=("inputs are float",))  # fmt: skip
    if value.dtype == torch.bool:
        yield Repair(name, DATA_ERROR, f"{field}.float()", _to(torch.float32))


def _to(dtype: torch.dtype):
    return lambda tensor: tensor.to(dtype)
