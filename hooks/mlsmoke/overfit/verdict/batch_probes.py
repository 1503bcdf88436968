"""Probes of the batch factory: a fresh batch, its fields, what they hold, and whether
two calls under one seed agree."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.batch_objects import tensors_in
from mlsmoke.overfit.training.inventory import batch_fields, describe_value
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


def shared_batch(run: GateRun) -> tuple[Any, ...]:
    """``(batch,)``: one fresh batch per gate run, shared by every diagnosis that reads
    its values, so a data pipeline is built once, not once per question; ``()`` when
    building it raises. The diagnoses only read it."""

    def build() -> tuple[Any, ...]:
        try:
            return (fresh_batch(run),)
        except Exception:
            return ()

    return remember(run, "shared-batch", build)


def shared_fields(run: GateRun) -> list[tuple[str, Any]]:
    """The fields of :func:`shared_batch` with their values (none when it raised)."""
    return remember(
        run,
        "shared-fields",
        lambda: [f for b in shared_batch(run) for f in batch_fields(b)],
    )


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


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shapes and values, NaN equal to NaN: a batch holding NaN is the same batch
    at every call, and must not pass for a nondeterministic one."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not (a.is_floating_point() or a.is_complex()):
        return bool(torch.equal(a, b))
    return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return same_tensor(a, b)
    flat_a, flat_b = tensors_in(a), tensors_in(b)
    if flat_a or flat_b:
        return len(flat_a) == len(flat_b) and all(map(_same, flat_a, flat_b))
    return bool(a == b)


__all__ = [
    "batch_fields",
    "describe_value",
    "differing_batch_field",
    "fresh_batch",
    "same_tensor",
    "seeded",
]
