"""The project's model and batch callables as one rank calls them.

The model is built under the seed plus the rank, as a project that seeds each rank
(``seed + rank``, nanoGPT's ``seed_offset``) or none builds it: only a broadcast makes
the ranks' parameters agree. The batch is drawn under the same seed on every rank, so
a loader that does not shard gives every rank the same batch, and one that does
(``DistributedSampler``) gives each its own.

In factory mode the gate wraps the model in DDP unless the project's callable already
returned a wrapped one; with a step function the project's code is the distributed
code, and nothing is wrapped. Only the distributed run is wrapped and observed
(``active``); the gate's probes on rank 0 build plain models in a world of one.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.recipe import as_recipe
from mlsmoke.overfit.training.script_pin import sampler_name as loader_sampler
from mlsmoke.overfit.training.ranks.loader_epochs import loader_object_epochs
from mlsmoke.overfit.training.ranks.observe import ModelObserver, is_fsdp
from mlsmoke.overfit.training.ranks.record import RankRecord


class RankFactories:
    def __init__(self, record: RankRecord, seed: int, device: str, wrap: bool) -> None:
        self.record, self.seed, self.device, self.wrap = record, seed, device, wrap
        self.active = False
        self.observer: ModelObserver | None = None
        self.build_optimizer: Callable[[Any], Any] | None = None

    def model(self, build: Callable[[], Any]) -> Callable[[], Any]:
        def rank_model() -> Any:
            torch.manual_seed(self.seed + self.record.rank)
            model = build()
            if not self.active or not isinstance(model, torch.nn.Module):
                return model
            model = self._wrapped(model)
            self.record.batchnorm = batchnorm_modules(model)
            self.observer = ModelObserver(model, self.record)
            return model

        return rank_model

    def batch(self, draw: Callable[[], Any]) -> Callable[[], Any]:
        def rank_batch() -> Any:
            if self.active and not self.record.epoch_sampler:
                torch.manual_seed(self.seed)
                self._judge_epochs(draw())
            torch.manual_seed(self.seed)
            produced = draw()
            if self.active:
                self.record.sampler = sampler_name(produced)
            return produced

        return rank_batch

    def _judge_epochs(self, produced: Any) -> None:
        """Two epochs of a loader object that drives its own (``loader_epochs.py``)."""
        try:
            epochs = loader_object_epochs(produced, Path.cwd())
        except Exception:  # the gate's own draw reports the object's error
            return
        if epochs is not None and epochs.orders:
            self.record.epoch_orders = epochs.orders
            self.record.epoch_sites = epochs.sites
            self.record.epoch_sampler = epochs.sampler

    def step(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """The project's step function; the observer's ``optimizer.step`` wrapper
        goes outermost before each call."""

        @functools.wraps(function)  # the gate binds its arguments by their names
        def rank_step(*args: Any, **kwargs: Any) -> Any:
            if self.active and self.observer is not None:
                self.observer.outermost()
            return function(*args, **kwargs)

        return rank_step

    def optimizer(self, build: Callable[..., Any]) -> Callable[..., Any]:
        def rank_optimizer(model: Any, lr: float | None) -> Any:
            built = build(model, lr)
            if not self.active:
                return built
            try:
                recipe = as_recipe(built, "the optimizer")
            except ProjectProblem:  # the loop says what is wrong with it
                return built
            if self.observer is not None:
                self.observer.watch(recipe.optimizer)
            if recipe.project_lr and not self.record.lr_ranked:
                self.record.lr_ranked, self.record.lr_site = (
                    recipe.project_lr,
                    recipe.source,
                )
                self.build_optimizer = functools.partial(build, lr=lr)
            return built

        return rank_optimizer

    def lr_alone(self, model: Any) -> float:
        """The lr the project's optimizer factory builds in a world of one, with
        torchrun's variables saying so (0: a built-in optimizer)."""
        if self.build_optimizer is None:
            return 0.0
        with _environment(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1"):
            built = self.build_optimizer(model)
        return as_recipe(built, "the optimizer").project_lr

    def _wrapped(self, model: torch.nn.Module) -> torch.nn.Module:
        if isinstance(model, DistributedDataParallel) or is_fsdp(model):
            self.record.wrapped_by = type(model).__name__
            return model
        if not self.wrap:
            return model
        self.record.wrapped_by = "gate"
        model = model.to(self.device)
        cuda = self.device.startswith("cuda")
        return DistributedDataParallel(
            model, device_ids=[torch.device(self.device).index] if cuda else None
        )

    def close(self) -> None:
        """Stop observing; the observer keeps what it saw."""
        if self.observer is not None:
            self.observer.close()


@contextmanager
def _environment(**variables: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def batchnorm_modules(model: torch.nn.Module) -> list[str]:
    """The BatchNorm modules that normalize over this rank's batch alone."""
    return [
        name
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm)
        and not isinstance(module, torch.nn.SyncBatchNorm)
    ]


def sampler_name(produced: Any) -> str:
    """The class of the sampler a DataLoader draws with; "" for anything else."""
    if not isinstance(produced, torch.utils.data.DataLoader):
        return ""
    return loader_sampler(produced)
