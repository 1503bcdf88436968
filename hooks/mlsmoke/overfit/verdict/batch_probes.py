"""Probes of the batch factory: a fresh batch, its fields, what they hold, and whether
two calls under one seed agree."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.device import map_tensors
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


@contextmanager
def seeded(run: GateRun) -> Iterator[None]:
    with deterministic(run.settings.seed):
        yield


def fresh_batch(run: GateRun) -> Any:
    """The batch factory's batch, built under the gate's seed."""
    with seeded(run):
        return run.batch_factory()


def batch_fields(batch: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` per field: mapping keys, tuple positions, or ``batch``."""
    if isinstance(batch, dict) or (hasattr(batch, "keys") and hasattr(batch, "items")):
        return [(str(k), v) for k, v in batch.items()]
    if isinstance(batch, (tuple, list)):
        return [(f"batch[{i}]", v) for i, v in enumerate(batch)]
    return [("batch", batch)]


def describe_value(value: Any) -> str:
    """What a batch field holds, for a user reading a diagnosis."""
    if isinstance(value, torch.Tensor):
        text = f"{str(value.dtype).replace('torch.', '')} tensor {tuple(value.shape)}"
        if (
            value.numel()
            and not value.is_floating_point()
            and value.dtype != torch.bool
        ):
            text += f", values {int(value.min())}..{int(value.max())}"
        return text
    if isinstance(value, str):
        return f"a str ({value[:20]!r})"
    if isinstance(value, (list, tuple)):
        inner = describe_value(value[0]).split(" (")[0] if value else "nothing"
        return f"a {type(value).__name__} of {len(value)} ({inner}, ...)"
    return f"a {type(value).__name__}"


def differing_batch_field(run: GateRun) -> str | None:
    """The first field that differs between two calls of the batch factory under the
    same seed, or None when they agree."""

    def compare() -> str | None:
        try:
            first, second = fresh_batch(run), fresh_batch(run)
        except Exception:
            return None
        for (name, a), (_, b) in zip(batch_fields(first), batch_fields(second)):
            if not _same(a, b):
                return name
        return None

    return remember(run, "batch-differ", compare)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    flat_a, flat_b = [], []
    map_tensors(a, lambda t: flat_a.append(t) or t)
    map_tensors(b, lambda t: flat_b.append(t) or t)
    if flat_a or flat_b:
        return len(flat_a) == len(flat_b) and all(map(_same, flat_a, flat_b))
    return bool(a == b)
