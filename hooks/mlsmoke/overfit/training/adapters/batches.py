"""A ``batch`` callable that returns something to draw from, not a batch.

- a LightningDataModule (``prepare_data``, ``setup``, ``train_dataloader``): prepared,
  set up for ``"fit"``, then its training loader is drawn from;
- a DataLoader or any other iterable of batches: its first batch.

The gate draws once per training run and trains every step on that one batch. Worker
processes a draw starts are shut down before it returns, so none is left behind; under
the run's seed, a shuffling sampler draws the same batch every time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mlsmoke.overfit.training.adapters.lightning_module import overrides
from mlsmoke.overfit.training.evidence import ProjectProblem

DATAMODULE_METHODS = ("prepare_data", "setup", "train_dataloader")
# Called with (batch, dataloader_idx); the gate moves the batch to its device itself.
BATCH_HOOKS = ("on_before_batch_transfer", "on_after_batch_transfer")


def is_datamodule(value: Any) -> bool:
    return all(callable(getattr(value, name, None)) for name in DATAMODULE_METHODS)


def is_batch_source(value: Any) -> bool:
    """An iterable of batches, as opposed to a batch: not a tensor, mapping, tuple,
    list, string or dataclass, all of which the gate trains on as they are."""
    if is_datamodule(value):
        return True
    if isinstance(value, (tuple, list, str, bytes, Mapping)) or hasattr(value, "keys"):
        return False
    if hasattr(value, "__dataclass_fields__") or _is_tensor(value):
        return False
    return hasattr(value, "__iter__") or hasattr(value, "__next__")


class BatchSource:
    """The project's ``batch`` callable, drawing the first batch when it returns a
    loader, an iterable or a data module; ``origin`` says where the last batch came
    from (None: the callable returned the batch itself)."""

    def __init__(self, factory: Callable[[], Any], name: str) -> None:
        self.factory, self.name = factory, name
        self.origin: str | None = None
        # The LightningModule the batch is for: its batch hooks apply to it.
        self.module: Any = None

    def __call__(self) -> Any:
        produced = self.factory()
        if not is_batch_source(produced):
            self.origin = None
            return apply_batch_hooks(produced, None, self.module)
        self.origin = f"{describe_source(produced)} from {self.name}"
        batch = first_batch(produced, self.name)
        datamodule = produced if is_datamodule(produced) else None
        return apply_batch_hooks(batch, datamodule, self.module)


def describe_source(source: Any) -> str:
    """Where the gate's batch comes from, e.g. ``first batch of DataLoader
    (shuffle=True, batch_size=16, num_workers=2)``."""
    kind = type(source).__name__
    if is_datamodule(source):
        return (
            f"first batch of {kind}.train_dataloader(), after prepare_data() and"
            ' setup("fit")'
        )
    return f"first batch of {kind}{_details(source)}"


def first_batch(source: Any, name: str) -> Any:
    """The first batch of ``source``: a data module's training loader's, or an
    iterable's."""
    loader, name = training_loader(source, name)
    return _draw(loader, name)


def training_loader(source: Any, name: str) -> tuple[Any, str]:
    """What to draw batches from, and its name: a data module's training loader,
    after ``prepare_data()`` and ``setup("fit")``, else ``source`` itself."""
    if is_datamodule(source):
        source.prepare_data()
        source.setup("fit")
        return source.train_dataloader(), f"{name}'s train_dataloader()"
    return source, name


def _draw(source: Any, name: str) -> Any:
    iterator = iter(source) if hasattr(source, "__iter__") else source
    try:
        return next(iterator)
    except StopIteration:
        raise ProjectProblem(
            "batch-empty",
            f"{name} gave a {type(source).__name__} with no batches",
            config_key="batch",
        ) from None
    finally:
        close_iterator(source, iterator)


def close_iterator(source: Any, iterator: Any) -> None:
    """Stop the iterator's worker processes (a DataLoader with workers) and close a
    generator, so that one draw leaves nothing running."""
    shutdown = getattr(iterator, "_shutdown_workers", None)
    if callable(shutdown):
        shutdown()
        if getattr(source, "_iterator", None) is iterator:  # persistent workers
            source._iterator = None
    close = getattr(iterator, "close", None)
    if iterator is not source and callable(close):
        close()


def apply_batch_hooks(batch: Any, datamodule: Any, module: Any) -> Any:
    """The batch hooks Lightning's Trainer calls on every batch before
    training_step, each from the data module when it defines it, else from the
    LightningModule (as Lightning chooses); Lightning's own defaults return the batch
    as it is, so only a project's own hooks are called."""
    for hook in BATCH_HOOKS:
        for owner in (datamodule, module):
            if owner is not None and overrides(owner, hook):
                batch = getattr(owner, hook)(batch, 0)
                break
    return batch


def _details(loader: Any) -> str:
    """A DataLoader's sampling and workers, e.g. ``(shuffle=True, num_workers=2)``."""
    parts = []
    sampler = getattr(loader, "sampler", None)
    if sampler is not None:
        kind = type(sampler).__name__
        if kind in ("RandomSampler", "SequentialSampler"):
            parts.append(f"shuffle={kind == 'RandomSampler'}")
        else:
            parts.append(f"sampler={kind}")
    batch_size = getattr(loader, "batch_size", None)
    if batch_size is not None:
        parts.append(f"batch_size={batch_size}")
    workers = getattr(loader, "num_workers", None)
    if workers is not None:
        parts.append(f"num_workers={workers}")
    return f" ({', '.join(parts)})" if parts else ""


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")
