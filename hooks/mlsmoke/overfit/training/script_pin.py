"""Script mode's batch pinning: the first batch a script fetches is every batch it
fetches, so that the script trains on one batch as the gate does.

Two ways to fetch are pinned. ``pin = "module:function"`` names a function whose first
result is returned again at every later call (nanoGPT's ``get_batch``); a function
of the script itself is wrapped where the script defines it (the script's code is
rewritten before it runs, nothing on disk changes). A function called on another
source, named by its first argument (``get_batch(val_data, i)``), whose first result
there is shaped otherwise (a validation set batched at another size) returns that
result at every call on it instead; the batch the gate trains on is the last one
fetched before the first update. Without ``pin``, the first
``DataLoader`` the script iterates gives its first batch forever; other loaders
(validation) are left alone.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.utils.data import DataLoader

from mlsmoke.overfit.training.batch_objects import tensors_in
from mlsmoke.overfit.training.evidence import error_chain
from mlsmoke.overfit.training.script_frames import construction_site

PIN_HOOK = "__mlsmoke_pin__"  # the name the rewritten script calls its wrapper by


class PinNotFound(Exception):
    """``pin`` names no function; the message says what was looked for."""


@dataclass
class PinnedBatch:
    """The batch every fetch returns once the first has been made."""

    source: str = ""  # "get_batch()" or "the first DataLoader"
    fetched: bool = False
    batch: Any = None
    fetches: int = 0
    sampler: str = ""  # the class of the pinned DataLoader's sampler
    epochs: Any = None  # under ranks, an EpochOrder (ranks/epoch_order.py)
    loader: int | None = field(default=None, repr=False)  # id of the pinned loader
    root: Path | None = None  # under ranks: the project's, for fetch_site
    fetch_site: str = ""  # under ranks: the project's line that fetched the batch
    # a pinned function's first result for each source it was called on, and
    # whether the first update was made (``batch`` is then the one it trained on)
    sources: dict[Any, Any] = field(default_factory=dict, repr=False)
    locked: bool = False
    # what a fetch raised: the run's error is the batch's when it is this one
    fetch_error: BaseException | None = field(default=None, repr=False)

    def lock(self) -> None:
        self.locked = True

    def keep(self, batch: Any, source: str, fetcher: FrameType | None = None) -> None:
        self.batch, self.source, self.fetched = batch, source, True
        if self.root is not None:
            self.fetch_site = construction_site(self.root, fetcher, frames=1)

    def fetch(self, fetcher: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fetcher(*args, **kwargs)``, what it raised kept as ``fetch_error``."""
        try:
            return fetcher(*args, **kwargs)
        except BaseException as error:
            self.fetch_error = error
            raise

    def raised(self, error: BaseException) -> bool:
        """Whether ``error`` is what a fetch raised, or was raised while handling it."""
        return any(link is self.fetch_error for link in error_chain(error))

    def copy(self) -> Any:
        """A copy of the batch: a script may change what it fetched in place."""
        self.fetches += 1
        return copy.deepcopy(self.batch)


def pinned(function: Callable[..., Any], pin: PinnedBatch) -> Callable[..., Any]:
    """``function``, returning its first result at every call; a source whose
    batches are shaped otherwise gets its own first result."""

    @functools.wraps(function)
    def first_result(*args: Any, **kwargs: Any) -> Any:
        source = _source(args) if len(pin.sources) < MAX_SOURCES else None
        if source not in pin.sources:
            given = pin.fetched and not pin.sources  # a batch kept for this run
            fetched = pin.batch if given else pin.fetch(function, *args, **kwargs)
            alike = pin.fetched and _shapes(fetched) == _shapes(pin.batch)
            pin.sources[source] = pin.batch if alike else fetched
        batch = pin.sources[source]
        if not pin.locked and (not pin.fetched or batch is not pin.batch):
            pin.keep(batch, f"{function.__name__}()", sys._getframe(1))
        pin.fetches += 1
        return copy.deepcopy(batch)

    return first_result


# Sources a pinned function keeps apart (splits, datasets); past them, every call
# is one source.
MAX_SOURCES = 4


def _source(args: tuple[Any, ...]) -> Any:
    """What a call fetches from, by its first argument: a name by its value, an
    object (a dataset tensor) by its identity; a number (an index, a step) or no
    argument is no source of its own."""
    if not args or args[0] is None or isinstance(args[0], (bool, int, float)):
        return None
    if isinstance(args[0], (str, bytes)):
        return args[0]
    return ("object", id(args[0]))


def _shapes(batch: Any) -> list[tuple[tuple[int, ...], torch.dtype]]:
    return [(tuple(t.shape), t.dtype) for t in tensors_in(batch)]


def rewrite_script(tree: ast.Module, function: str) -> bool:
    """Wrap every definition of ``function`` in ``tree`` with ``PIN_HOOK`` where it is
    defined; whether there was one."""
    found = False
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if not isinstance(statements, list):
                continue
            for index in reversed(range(len(statements))):
                statement = statements[index]
                if (
                    isinstance(statement, ast.FunctionDef)
                    and statement.name == function
                ):
                    statements.insert(index + 1, _wrap(function, statement))
                    found = True
    return found


def _wrap(function: str, where: ast.stmt) -> ast.stmt:
    call = ast.parse(f"{function} = {PIN_HOOK}({function})").body[0]
    for node in ast.walk(call):
        ast.copy_location(node, where)
    return call


def pin_module_function(spec: str, pin: PinnedBatch) -> Callable[[], None]:
    """Wrap ``module:function`` (a module the script imports) in place; returns what
    undoes it. PinNotFound when the module or the function is missing."""
    module_name, _, name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PinNotFound(f"cannot import {module_name!r}: {error}") from None
    original = getattr(module, name, None)
    if not callable(original):
        raise PinNotFound(f"module {module_name!r} has no function {name!r}")
    setattr(module, name, pinned(original, pin))
    return lambda: setattr(module, name, original)


def pin_first_loader(pin: PinnedBatch) -> Callable[[], None]:
    """Pin the first DataLoader iterated; returns what undoes it."""
    original = DataLoader.__iter__

    def first_batch_forever(loader: DataLoader) -> Iterator[Any]:
        if pin.loader is None:
            pin.loader = id(loader)
        if pin.loader != id(loader):
            return original(loader)
        if not pin.fetched:
            pin.sampler = sampler_name(loader)
            try:
                first = pin.fetch(lambda: next(iter(original(loader))))
                pin.keep(first, "the first DataLoader", sys._getframe(1))
            except StopIteration:
                pin.loader = None  # an empty loader pins nothing
                return original(loader)
        if pin.epochs is not None:
            pin.epochs.new_epoch(loader)
            length = pin.epochs.first_epoch_length(loader)
            if length is not None:
                return (pin.copy() for _ in range(length))
        return _forever(pin)

    DataLoader.__iter__ = first_batch_forever  # type: ignore[method-assign]
    return lambda: setattr(DataLoader, "__iter__", original)


def sampler_name(loader: DataLoader) -> str:
    """The class of the sampler ``loader`` draws its indices with."""
    batch_sampler = getattr(loader, "batch_sampler", None)
    sampler = getattr(batch_sampler, "sampler", None) or loader.sampler
    return type(sampler).__name__


def _forever(pin: PinnedBatch) -> Iterator[Any]:
    while True:
        yield pin.copy()
