"""One rank of a distributed gate in script mode: the project's training script runs
as ``torchrun --nproc-per-node N train.py`` runs it, so its own distributed branch
starts the process group, wraps the model and shards the data.

The rank adds a few points to script mode's instruments (``script_points.py``):

- ``init_process_group``: the script's own call, with the gate's collective-timeout
  as its timeout when the script gives none or a longer one, so that a collective
  only some ranks make ends in time; a taken ``MASTER_PORT`` is retried;
- the first ``backward()`` after the optimizer is built: the model (and the DDP
  wrapper around it) is found, and the same observer as the factory mode's
  (``observe.py``) digests its parameters and gradients from then on;
- each ``optimizer.step()``: the ranks stop at the same update (``agreement.py``).

Rank 0 then runs the script once more as one process, to its first updates, pinned
to its own batch, for the lr it builds its optimizer with and the gradient of its
first update alone (``script_alone.py``).

After the run, the rank writes its record as a factory-mode rank does and leaves the
script's process group. Rank 0 goes on alone: its probes run the script as one
process (``python train.py``, torchrun's variables unset).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from mlsmoke.overfit.process import stacks
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.ranks import agreement
from mlsmoke.overfit.training.ranks.epoch_order import EpochOrder
from mlsmoke.overfit.training.ranks.factories import batchnorm_modules
from mlsmoke.overfit.training.ranks.observe import ModelObserver, sample_digests
from mlsmoke.overfit.training.ranks.record import RankRecord, gave_up_waiting
from mlsmoke.overfit.training.ranks.script_alone import alone_points
from mlsmoke.overfit.training.ranks.script_sites import watch_hand_reduce, watch_seeds
from mlsmoke.overfit.training.ranks.step_barrier import StepBarrier
from mlsmoke.overfit.training.script_frames import construction_site
from mlsmoke.overfit.training.script_model import find_model
from mlsmoke.overfit.training.script_pin import PinnedBatch
from mlsmoke.overfit.training.script_points import ScriptWatch

ADDRESS_IN_USE = "address already in use"


class PortTaken(BaseException):
    """The store's port was taken before rank 0 bound it: the launcher retries on
    another. A BaseException, so that the script's own ``except Exception`` lets it
    through."""


class RankDone(BaseException):
    """This rank's part is over: its record holds what it saw."""


class ScriptRank:
    """The points one rank adds to its first run, and what it records of it."""

    def __init__(self, record: RankRecord, settings: GateSettings) -> None:
        self.record, self.settings = record, settings
        self.world_size = record.world_size
        self.observer: ModelObserver | None = None
        self.epochs: EpochOrder | None = None
        self.barrier: StepBarrier | None = None

    @contextmanager
    def points(self, watch: ScriptWatch, pin: PinnedBatch) -> Iterator[None]:
        undo = [self._time_limited_init(), self._observe_from_first_backward(watch),
                watch_seeds(self.record, watch),
                watch_hand_reduce(self.record, watch)]  # fmt: skip
        pin.epochs = self.epochs = EpochOrder(watch.root)
        pin.root = watch.root
        agreement.current = self._agree_within_group
        try:
            yield
        finally:
            agreement.current = None
            for step in reversed(undo):
                step()
            if self.observer is not None:
                self.observer.close()

    def finished(self, outcome: Any, run_alone: Callable[[], Any]) -> None:
        """Record the run, leave the script's process group; RankDone above rank 0.
        Rank 0 then runs the script as one process (``script_alone.py``)."""
        self._record(outcome.evidence, outcome.pin)
        self.record.process_group = dist.is_initialized()
        if dist.is_initialized():
            dist.destroy_process_group()
        if self.record.rank != 0 or gave_up_waiting(self.record.error):
            raise RankDone
        self.record.lr_ranked = outcome.watch.constructed_lr or 0.0
        self.record.lr_site = outcome.watch.optimizer_site
        if self.record.error:
            return
        alone = RankRecord(0, 1)
        try:
            watch = run_alone(alone_points(outcome.pin, alone)).watch
        except Exception:  # a script that cannot run alone: nothing is known
            return
        self.record.lr_alone = watch.constructed_lr or 0.0
        self.record.reference_gradient = alone.local_gradient

    def _agree_within_group(self, wants: bool, must: bool) -> bool:
        """The ranks' agreement, in the script's process group; alone without one."""
        if not dist.is_initialized():
            return wants or must
        return agreement.agreeing_at(self.barrier)(wants, must)

    def _time_limited_init(self) -> Callable[[], None]:
        original = dist.init_process_group
        limit = timedelta(seconds=self.settings.collective_timeout)

        def init_process_group(*args: Any, **kwargs: Any) -> None:
            given = kwargs.get("timeout")
            if len(args) < 3 and (given is None or given > limit):
                kwargs["timeout"] = limit
            try:
                original(*args, **kwargs)
            except Exception as error:
                if ADDRESS_IN_USE in str(error).lower():
                    raise PortTaken(str(error)) from None
                raise
            self.barrier = StepBarrier.beside_default_group(limit)

        owners = [dist, dist.distributed_c10d]
        for owner in owners:
            owner.init_process_group = init_process_group  # type: ignore[assignment]
        return lambda: [setattr(o, "init_process_group", original) for o in owners]

    def _observe_from_first_backward(self, watch: ScriptWatch) -> Callable[[], None]:
        original = torch.autograd.backward

        def backward(*args: Any, **kwargs: Any) -> None:
            if not self.record.backward_site:
                self.record.backward_site = construction_site(
                    watch.root, sys._getframe(1), frames=1
                )
            if self.observer is None and watch.optimizer is not None:
                self._observe(watch, sys._getframe(1))
            original(*args, **kwargs)

        torch.autograd.backward = backward
        return lambda: setattr(torch.autograd, "backward", original)

    def _observe(self, watch: ScriptWatch, frame: Any) -> None:
        """Observe the model that owns the optimizer's parameters, through its DDP
        wrapper when there is one; the eval-mode update (no backward) syncs nothing."""
        assert watch.optimizer is not None
        parameters = [p for g in watch.optimizer.param_groups for p in g["params"]]
        model = find_model(parameters, frame)
        if model is None:
            return
        wrapper = _ddp_around(model, frame)
        self.record.wrapped_by = type(wrapper).__name__ if wrapper else ""
        self.record.batchnorm = batchnorm_modules(model)
        self.observer = ModelObserver(wrapper or model, self.record)
        self.observer.watch(watch.optimizer)
        if wrapper is not None:
            wrapper.register_forward_pre_hook(_no_sync_when_evaluating(watch))

    def _record(self, evidence: Any, pin: PinnedBatch) -> None:
        record = self.record
        record.losses = list(evidence.losses)
        record.batch_size = evidence.batch_size
        if evidence.error is not None:
            error = evidence.error
            record.error = f"{type(error).__name__}: {error}"
            frames = stacks.user_frames(stacks.traceback_frames(error.__traceback__))
            record.traceback = "\n".join(str(frame) for frame in frames)
        record.sampler, record.batch_site = pin.sampler, pin.fetch_site
        if self.epochs is not None:
            record.epoch_orders, record.epoch_sites = (
                self.epochs.orders,
                self.epochs.sites,
            )
            record.epoch_sampler = self.epochs.sampler
        if pin.fetched:
            try:
                record.batch_digest, record.sample_digests = sample_digests(pin.batch)
            except Exception:  # a batch that is not tensors: nothing to compare
                pass


def _ddp_around(model: torch.nn.Module, frame: Any) -> DistributedDataParallel | None:
    """The DDP wrapper whose module is ``model``, held by a frame on the stack."""
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, DistributedDataParallel) and model in (
                value.module,
                getattr(value.module, "_orig_mod", None),
            ):
                return value
        frame = frame.f_back
    return None


def _no_sync_when_evaluating(watch: ScriptWatch) -> Callable[..., None]:
    """The gate's eval-mode update runs forwards with no backward: DDP must not wait
    for one (it would raise at the next forward)."""

    def before_forward(ddp: DistributedDataParallel, args: Any) -> None:
        if watch.evaluating:
            ddp.require_backward_grad_sync = False

    return before_forward
