"""The points the profile instruments while a training script runs unchanged.

- the first torch.optim optimizer built (not L-BFGS), and the line that built it: its
  ``step()`` is one update, and each update's end is where the session changes stage;
- its step's pre and post hooks: the optimizer phase, and the update's end;
- ``torch.autograd.backward`` (``loss.backward()`` calls it): the backward phase;
- ``__next__`` of a DataLoader's iterators, with grad enabled: the data phase (an eval
  loop runs under ``no_grad``);
- the outermost module forward: the forward phase, and its first input's samples and
  tokens. Without a DataLoader, the data phase is the time from an update's
  ``optimizer.step()`` to the next forward: where a script draws its next batch.

Each phase is a ``record_function`` range named as the factory profile's
(``phases.py``), opened only while ``recording``; the module hooks are installed only
while ``watch_modules(True)``, as their slower module calls would slow the timed steps.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.profiler import record_function
from torch.utils.data.dataloader import _BaseDataLoaderIter

from mlsmoke.overfit.training.script_frames import construction_site
from mlsmoke.overfit.training.script_model import find_model
from mlsmoke.profile import phases
from mlsmoke.profile.model_size import batch_figures

DATA_LOADER = "loader"  # the data phase: DataLoader.__next__
DATA_GAP = "gap"  # the data phase: optimizer.step() to the next forward


@dataclass
class UpdateSize:
    """What one update's forwards (outermost, with grad) were given."""

    forwards: int = 0
    samples: int | None = None
    tokens: int | None = None

    def add(self, samples: int | None, tokens: int | None) -> None:
        self.forwards += 1
        if samples is not None:
            self.samples = (self.samples or 0) + samples
        if tokens is not None:
            self.tokens = (self.tokens or 0) + tokens


@dataclass
class LoaderSeen:
    """The first DataLoader the script drew a training batch from."""

    num_workers: int | None
    pin_memory: bool | None
    batch_size: int | None
    where: str = ""  # the project line that draws from it: trainer.py:84 in run


class _Range:
    """One ``record_function`` range, opened at one hook and closed at another."""

    def __init__(self, phase: str) -> None:
        self.name = phases.range_name(phase)
        self.context: Any = None

    def start(self) -> None:
        if self.context is None:
            self.context = record_function(self.name)
            self.context.__enter__()

    def end(self) -> None:
        if self.context is not None:
            context, self.context = self.context, None
            context.__exit__(None, None, None)


@dataclass
class ScriptPoints:
    """The state of one instrumented run; ``on_update`` is called at each update's
    end with the number of the update that ended (from 0)."""

    root: Path
    on_update: Callable[[int], None]
    optimizer: torch.optim.Optimizer | None = None
    optimizer_site: str = ""
    model: torch.nn.Module | None = None
    updates: int = 0  # updates ended
    phase: str = "script"  # where the script is: script, forward, backward, step
    recording: bool = False  # phase ranges on: the profiled updates
    data_mode: str = DATA_GAP
    loader: LoaderSeen | None = None
    size: UpdateSize = field(default_factory=UpdateSize)  # the update under way
    sized: UpdateSize | None = None  # the last update measured whole
    _module_hooks: list[Any] = field(default_factory=list)
    _depth: int = 0
    _ranges: dict[str, _Range] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ranges = {
            phase: _Range(phase)
            for phase in (phases.DATA_WAIT, phases.FORWARD, phases.OPTIMIZER)
        }

    @property
    def device(self) -> str:
        if self.optimizer is None:
            return "cpu"
        for group in self.optimizer.param_groups:
            for parameter in group["params"]:
                return str(parameter.device)
        return "cpu"

    def watch_modules(self, on: bool) -> None:
        """Install (or remove) the module hooks: forward ranges and batch sizes."""
        if on and not self._module_hooks:
            self._depth = 0
            self._module_hooks = [
                register_module_forward_pre_hook(self._forward_starts),
                register_module_forward_hook(self._forward_ends, always_call=True),
            ]
        elif not on:
            for handle in self._module_hooks:
                handle.remove()
            self._module_hooks = []
            self.size = UpdateSize()

    def close_ranges(self) -> None:
        for opened in self._ranges.values():
            opened.end()

    # the hooks

    def _forward_starts(self, module: torch.nn.Module, args: Any) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        if self.data_mode == DATA_GAP:
            self._ranges[phases.DATA_WAIT].end()
        self.phase = "forward"
        if self.recording:
            self._ranges[phases.FORWARD].start()
        if torch.is_grad_enabled():
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            self.size.add(*batch_figures(tensors))

    def _forward_ends(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        self._depth = max(self._depth - 1, 0)
        if self._depth == 0:
            self._ranges[phases.FORWARD].end()
            self.phase = "script"

    def _before_step(self, optimizer: torch.optim.Optimizer) -> None:
        if optimizer is not self.optimizer:
            return
        if self.model is None:
            parameters = [p for g in optimizer.param_groups for p in g["params"]]
            self.model = find_model(parameters, sys._getframe(1))
        self._ranges[phases.DATA_WAIT].end()
        self.phase = "step"
        if self.recording:
            self._ranges[phases.OPTIMIZER].start()

    def _after_step(self, optimizer: torch.optim.Optimizer) -> None:
        if optimizer is not self.optimizer:
            return
        self._ranges[phases.OPTIMIZER].end()
        if self.size.forwards:
            self.sized = self.size
        self.size = UpdateSize()
        self.updates += 1
        self.phase = "script"
        self.on_update(self.updates - 1)
        if self.recording and self.data_mode == DATA_GAP:
            self._ranges[phases.DATA_WAIT].start()


@contextmanager
def instrumented(points: ScriptPoints) -> Iterator[None]:
    """The points above, installed for one run of the script."""
    undo: list[Callable[[], None]] = []
    try:
        undo.append(_wrap_optimizer_init(points))
        undo.append(_wrap_backward(points))
        undo.append(_wrap_loader_next(points))
        pre = register_optimizer_step_pre_hook(
            lambda optimizer, args, kwargs: points._before_step(optimizer)
        )
        post = register_optimizer_step_post_hook(
            lambda optimizer, args, kwargs: points._after_step(optimizer)
        )
        undo += [pre.remove, post.remove]
        yield
    finally:
        points.watch_modules(False)
        points.close_ranges()
        for step in reversed(undo):
            step()


def _wrap_optimizer_init(points: ScriptPoints) -> Callable[[], None]:
    original = torch.optim.Optimizer.__init__

    def built(optimizer: Any, params: Any, defaults: dict, *args: Any, **kw: Any):
        original(optimizer, params, defaults, *args, **kw)
        lbfgs = type(optimizer).__module__ == "torch.optim.lbfgs"
        if points.optimizer is None and not lbfgs:
            points.optimizer = optimizer
            points.optimizer_site = construction_site(points.root, sys._getframe(1))

    torch.optim.Optimizer.__init__ = built  # type: ignore[method-assign]
    return lambda: setattr(torch.optim.Optimizer, "__init__", original)


def _wrap_backward(points: ScriptPoints) -> Callable[[], None]:
    original = torch.autograd.backward

    def backward(tensors: Any, *args: Any, **kwargs: Any) -> None:
        points.phase = "backward"
        if not points.recording:
            original(tensors, *args, **kwargs)
        else:
            with record_function(phases.range_name(phases.BACKWARD)):
                original(tensors, *args, **kwargs)
        points.phase = "script"

    torch.autograd.backward = backward
    return lambda: setattr(torch.autograd, "backward", original)


def _wrap_loader_next(points: ScriptPoints) -> Callable[[], None]:
    original = _BaseDataLoaderIter.__next__

    def next_batch(iterator: _BaseDataLoaderIter) -> Any:
        if not torch.is_grad_enabled():  # an eval loop's
            return original(iterator)
        if points.loader is None:
            where = construction_site(points.root, sys._getframe(1), frames=1)
            points.loader = _loader_seen(iterator, where)
        points.phase = "data"
        if points.recording and points.data_mode == DATA_LOADER:
            with record_function(phases.range_name(phases.DATA_WAIT)):
                batch = original(iterator)
        else:
            batch = original(iterator)
        points.phase = "script"
        return batch

    _BaseDataLoaderIter.__next__ = next_batch  # type: ignore[method-assign]
    return lambda: setattr(_BaseDataLoaderIter, "__next__", original)


def _loader_seen(iterator: _BaseDataLoaderIter, where: str) -> LoaderSeen:
    workers = getattr(iterator, "_num_workers", None)
    pin = getattr(iterator, "_pin_memory", None)
    size = getattr(getattr(iterator, "_index_sampler", None), "batch_size", None)
    return LoaderSeen(
        workers if isinstance(workers, int) else None,
        pin if isinstance(pin, bool) else None,
        size if isinstance(size, int) else None,
        where,
    )
