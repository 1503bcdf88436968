"""The batches of a profiled run, one per step, as the project's training makes them.

The ``batch`` callable's product decides, as for the gate (``adapters/batches.py``):
a DataLoader, iterable or data module is iterated batch after batch, with its workers,
``pin_memory`` and batch size as configured, a new epoch when one ends; a callable that
returns a batch is called once per step.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.training.adapters.batches import (
    apply_batch_hooks,
    close_iterator,
    is_batch_source,
    is_datamodule,
    training_loader,
)
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.profile.figures import Loader


class BatchStream:
    """``next()`` gives the next batch; ``loader`` describes where they come from."""

    def __init__(self, factory: Callable[[], Any], where: str, module: Any) -> None:
        self.factory, self.where, self.module = factory, where, module
        self.source: Any = None  # the loader, once the factory returned one
        self.datamodule: Any = None
        self.iterator: Any = None
        self.first: Any = None  # a batch the factory returned, for step one

    def start(self) -> None:
        produced = self.factory()
        if not is_batch_source(produced):
            self.first = produced
            return
        self.datamodule = produced if is_datamodule(produced) else None
        self.source, _ = training_loader(produced, self.where)

    def next(self) -> Any:
        if self.source is None:
            batch, self.first = (
                (self.first, None) if self.first is not None else (self.factory(), None)
            )
        else:
            batch = self._draw()
        return apply_batch_hooks(batch, self.datamodule, self.module)

    def _draw(self) -> Any:
        for attempt in range(2):
            if self.iterator is None:
                self.iterator = iter(self.source)
            try:
                return next(self.iterator)
            except StopIteration:
                self.iterator = None  # the epoch ended: a new one, as training does
        raise ProjectProblem(
            "batch-empty",
            f"{self.where} gave a {type(self.source).__name__} with no batches",
            config_key="batch",
        )

    def close(self) -> None:
        if self.iterator is not None:
            close_iterator(self.source, self.iterator)
            self.iterator = None

    def loader(self) -> Loader:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        if self.source is None:
            return Loader("batch callable", self.where, cpu_count=cpus)
        source, where = self.source, self.where
        kind = type(source).__name__
        if self.datamodule is not None:
            method = f"{type(self.datamodule).__name__}.train_dataloader()"
            kind = f"{method} ({kind})"
            where = f"{method}{_at(type(self.datamodule).train_dataloader)}"
        workers = getattr(source, "num_workers", None)
        pin = getattr(source, "pin_memory", None)
        size = getattr(source, "batch_size", None)
        return Loader(
            kind,
            where,
            num_workers=workers if isinstance(workers, int) else None,
            pin_memory=pin if isinstance(pin, bool) else None,
            batch_size=size if isinstance(size, int) else None,
            cpu_count=cpus,
        )


def _at(function: Any) -> str:
    """`` (path:line)`` of ``function``'s definition, relative to the project root
    (the working directory), or "" when it has no source."""
    try:
        _, line = inspect.getsourcelines(function)
        path = inspect.getsourcefile(function)
    except (OSError, TypeError):
        return ""
    return f" ({os.path.relpath(path)}:{line})" if path else ""
