"""One rank of a distributed gate, in a process that ``process/ranks.py`` started
with torchrun's variables set.

Every rank runs the gate's first training run together, in a world of N: each
memorizes its own shard and the ranks stop at the same step (``agreement.py``). Then
they leave that world. The ranks above 0 write their record and end; rank 0 joins a
world of one, where the gate's single-process diagnoses and checks run as they do
without ranks (a project's own DDP wrapper works there too), and writes the Result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from mlsmoke.overfit.process import stacks
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.engine import StepCallback, train
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.training.objective import forward_loss
from mlsmoke.overfit.training.ranks import agreement
from mlsmoke.overfit.training.ranks.factories import RankFactories
from mlsmoke.overfit.training.ranks.observe import sample_digests
from mlsmoke.overfit.training.ranks.record import RankRecord, gave_up_waiting
from mlsmoke.overfit.training.ranks.script_rank import RankDone as ScriptRankDone
from mlsmoke.overfit.training.ranks.script_rank import ScriptRank
from mlsmoke.overfit.training.ranks.step_barrier import StepBarrier
from mlsmoke.overfit.verdict.result import CONFIG_ERROR


class RankDone(Exception):
    """This rank's part is over: its record holds what it saw."""


def backend_for(device: str) -> str:
    return "nccl" if device.startswith("cuda") else "gloo"


def rank_device(device: str, local_rank: int) -> str:
    """The device of this rank: its own GPU (``LOCAL_RANK``) or the CPU."""
    if not device.startswith("cuda"):
        return device
    torch.cuda.set_device(local_rank)
    return f"cuda:{local_rank}"


def run_rank(
    settings: GateSettings,
    device: str,
    on_step: StepCallback | None,
    deadline: float,
    record_path: Path,
) -> None:
    """Run this rank's part of the gate and write its record to ``record_path``."""
    from mlsmoke.overfit.gate import run_gate

    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = rank_device(device, int(os.environ["LOCAL_RANK"]))
    record = RankRecord(rank, world_size)
    on_step = on_step if rank == 0 else None
    try:
        if settings.script is not None:  # the script starts its own process group
            result = _run_script_rank(settings, on_step, deadline, record)
        else:
            timeout = timedelta(seconds=settings.collective_timeout)
            dist.init_process_group(backend_for(device), timeout=timeout)
            hooks = _RankRun(record, settings, device)
            hooks.barrier = StepBarrier.beside_default_group(timeout)
            result, _ = run_gate(settings, device, on_step, deadline=deadline,
                                 ranks=hooks)  # fmt: skip
        record.result = result.to_json()
    except (RankDone, ScriptRankDone):
        pass
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
        _write_atomically(record_path, record.to_json())


def _run_script_rank(
    settings: GateSettings,
    on_step: StepCallback | None,
    deadline: float,
    record: RankRecord,
) -> Any:
    from mlsmoke.overfit.script_gate import run_script_gate

    hooks = ScriptRank(record, settings)
    result = run_script_gate(settings, on_step, deadline, ranks=hooks)[0]
    if result.diagnosis.code == CONFIG_ERROR:  # this rank stopped before training
        record.error = f"ScriptNotRunnable: {result.diagnosis.summary}"
    return result


class _RankRun:
    """The rank's factories, and a trainer whose first run is the distributed one."""

    def __init__(self, record: RankRecord, settings: GateSettings, device: str):
        self.record, self.settings = record, settings
        wrap = settings.step is None
        self.rank_factories = RankFactories(record, settings.seed, device, wrap)
        self.barrier: StepBarrier | None = None
        self.ran = False

    def factories(self, loaded: dict[str, Callable[..., Any]]) -> dict[str, Any]:
        loaded = dict(loaded)
        loaded["model"] = self.rank_factories.model(loaded["model"])
        loaded["batch"] = self.rank_factories.batch(loaded["batch"])
        if "step" in loaded:
            loaded["step"] = self.rank_factories.step(loaded["step"])
        return loaded

    def trainer(self, *factories: Any, **options: Any) -> Evidence:
        if self.ran:  # rank 0's probes, in a world of one
            return train(*factories, **options)
        self.ran = True
        factories = (*factories[:3], self.rank_factories.optimizer(factories[3]))
        self.rank_factories.active = True
        agreement.current = agreement.agreeing_at(self.barrier)
        try:
            evidence = train(*factories, **options)
        finally:
            agreement.current = None
            self.rank_factories.active = False
            self.rank_factories.close()
        batch = self._record(evidence, factories[1])
        dist.destroy_process_group()
        if self.record.rank != 0 or gave_up_waiting(self.record.error):
            raise RankDone
        dist.init_process_group(
            "gloo", store=dist.HashStore(), rank=0, world_size=1
        )  # a world of one: the project's DDP wrapper still builds
        if self.settings.step is None and batch is not None:
            self._reference_gradient(factories[0], factories[2], batch)
        self._lr_alone(factories[0])
        return evidence

    def _lr_alone(self, build_model: Callable[[], Any]) -> None:
        """The lr rank 0's optimizer factory builds in a world of one: one scaled by
        the world size twice shows as N² times it (``lr_scaled_twice.py``)."""
        if not self.record.lr_ranked or self.record.error:
            return
        try:
            with deterministic(self.settings.seed):
                self.record.lr_alone = self.rank_factories.lr_alone(build_model())
        except Exception:  # a factory that cannot build alone: the lr is not known
            pass

    def _reference_gradient(
        self, build_model: Callable[[], Any], loss_fn: Any, batch: Any
    ) -> None:
        """Rank 0's gradient at its first update, in a world of one: a loss that
        scales itself by the world size shows as the ratio to the distributed one."""
        observer = self.rank_factories.observer
        if observer is None or not self.record.local_gradient:
            return
        try:
            with deterministic(self.settings.seed):
                model = build_model()  # rank 0's initial parameters, as DDP's
                forward_loss(loss_fn, model, batch).backward()
            self.record.reference_gradient = observer.project(
                [p.grad for p in model.parameters() if p.requires_grad]
            )
        except Exception:  # the project's error is the distributed run's to report
            pass

    def _record(self, evidence: Evidence, batch_factory: Callable[[], Any]) -> Any:
        """Fill in the record; the rank's batch (None when it cannot be drawn)."""
        record = self.record
        record.losses = list(evidence.losses)
        record.batch_size = evidence.batch_size
        error = evidence.error
        if error is not None:
            record.error = f"{type(error).__name__}: {error}"
            frames = stacks.user_frames(stacks.traceback_frames(error.__traceback__))
            record.traceback = "\n".join(str(frame) for frame in frames)
        try:
            batch = batch_factory()
            record.batch_digest, record.sample_digests = sample_digests(batch)
        except Exception:  # the batch's own error is in the evidence already
            return None
        return batch


def _write_atomically(path: Path, data: dict[str, Any]) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)
