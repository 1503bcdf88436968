"""The batches a check reads: the first ``count`` a loader yields, drawn through the
gate's adapters (``overfit/training/adapters/batches.py``): a DataLoader or iterable is
iterated, a LightningDataModule prepared and set up for ``"fit"`` first, a callable
that returns one batch is called once per batch. A loader that runs out stops early;
worker processes are shut down before this returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.training.adapters.batches import (
    apply_batch_hooks,
    close_iterator,
    is_batch_source,
    is_datamodule,
    training_loader,
)


def is_data_frame(value: Any) -> bool:
    """A pandas-like table: its columns are the fields, and the table is one batch."""
    return hasattr(value, "columns") and hasattr(value, "dtypes")


def draw_batches(factory: Callable[[], Any], count: int, name: str) -> list[Any]:
    """Up to ``count`` batches of what ``factory`` returns."""
    produced = factory()
    if is_data_frame(produced):  # the whole table: its rows, dealt into batches
        return [produced.iloc[start::count] for start in range(count)]
    if not is_batch_source(produced):
        return [produced] + [factory() for _ in range(count - 1)]
    return take(produced, count, name)


def take(source: Any, count: int, name: str) -> list[Any]:
    """The first ``count`` batches of a loader, iterable or data module."""
    datamodule = source if is_datamodule(source) else None
    loader, _ = training_loader(source, name)
    iterator = iter(loader) if hasattr(loader, "__iter__") else loader
    batches = []
    try:
        for _ in range(count):
            try:
                batch = next(iterator)
            except StopIteration:
                break
            batches.append(apply_batch_hooks(batch, datamodule, None))
    finally:
        close_iterator(loader, iterator)
    return batches
