"""One profile, inside the project's interpreter: the gate's model, loss and recipe
(its adapters, ``overfit/training/setup.py``), stepped on the project's real batches.

Warm-up steps, then timed steps without the profiler (steps/s), then the profiled
steps under ``torch.profiler``, each phase in a ``record_function`` range of its own.
Never raises for the project's errors: they come back as an outcome naming the phase.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from mlsmoke.overfit.factories import NotConfigured
from mlsmoke.overfit.preparation import prepare
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training import instruments, setup
from mlsmoke.overfit.training.adapters.lightning_module import overrides
from mlsmoke.overfit.training.batch_objects import move, tensors_in
from mlsmoke.overfit.training.device import (
    device_kind,
    placement,
    restore_cpu_threads,
)
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.training.run_state import TrainingRun
from mlsmoke.profile import machine, phases, thread_timing, trace
from mlsmoke.profile.batches import BatchStream
from mlsmoke.profile.figures import Figures, Model, Optimizer
from mlsmoke.profile.model_size import batch_figures, parameter_count

OK, CONFIG_ERROR, DATA_ERROR, TRAIN_ERROR = (
    "ok",
    "config-error",
    "data-error",
    "train-error",
)


@dataclasses.dataclass
class Request:
    steps: int
    warmup: int
    trace: str  # where the Chrome trace goes (.json.gz)
    device: str | None = None


class Failed(Exception):
    def __init__(self, status: str, message: str, evidence: list[str] | None = None):
        super().__init__(message)
        self.status, self.message, self.evidence = status, message, evidence or []


def profile_gate(
    settings: GateSettings, request: Request, root: Path
) -> dict[str, Any]:
    """``{"gate", "status", "message", "evidence", "figures"}`` for one gate."""
    outcome: dict[str, Any] = {"gate": settings.name, "status": OK}
    try:
        figures = _profile(settings, request, root)
        outcome["figures"] = figures.to_json()
    except Failed as failed:
        outcome.update(
            status=failed.status, message=failed.message, evidence=failed.evidence
        )
    return outcome


def _profile(settings: GateSettings, request: Request, root: Path) -> Figures:
    try:
        prepared = prepare(settings, request.device)
    except NotConfigured as error:
        summary = f"{error.key}: {error}" if error.key else str(error)
        raise Failed(CONFIG_ERROR, summary, _lines(error.traceback)) from None
    settings, adapted = prepared.settings, prepared.adapted
    batch_callable = prepared.loaded["batch"]  # the loader, not its first batch
    where = _where(settings.batch, batch_callable, root)
    stream = BatchStream(batch_callable, where, adapted.batch_source.module)
    loop = _Loop(settings, adapted.factories, prepared.device, stream,
                 prepared.build_optimizer)  # fmt: skip
    try:
        loop.build()
        return loop.measure(request, root)
    finally:
        stream.close()


class _Loop:
    """The textbook step, phase by phase, on the project's model and batches."""

    def __init__(
        self,
        settings: GateSettings,
        factories: dict[str, Callable[..., Any]],
        device: str,
        stream: BatchStream,
        recipe_factory: Callable[..., Any],
    ) -> None:
        self.settings, self.device, self.stream = settings, device, stream
        self.factories, self.recipe_factory = factories, recipe_factory
        self.run: TrainingRun | None = None
        self.step_index = 0
        self.batch_size: int | None = None
        self.tokens: int | None = None

    def build(self) -> None:
        evidence = Evidence(device=self.device, lr=self.settings.lr or 0.0)
        run = TrainingRun(
            evidence, self.factories["model"], self.stream.next,
            self.factories.get("loss"), self.recipe_factory, self.settings.lr,
            1.0, None, None, float("inf"), None,
        )  # fmt: skip
        torch.manual_seed(self.settings.seed)
        with self._failing_as(TRAIN_ERROR, "building the model"):
            setup.build_model(run)
            restore_cpu_threads(run.threads)  # the project's own thread count
        with self._failing_as(DATA_ERROR, f"the batch callable {self.stream.where}"):
            self.stream.start()
        with self._failing_as(TRAIN_ERROR, "building the optimizer"):
            self.recipe = setup.build_recipe(run)
        run.model.train()
        self.run = run

    @contextmanager
    def _failing_as(self, status: str, doing: str) -> Iterator[None]:
        try:
            yield
        except ProjectProblem as error:
            if error.config_key is not None:
                key = self.settings.key_path(error.config_key)
                raise Failed(CONFIG_ERROR, f"{key}: {error}") from None
            raise Failed(status, f"{doing}: {error}") from None
        except (Exception, SystemExit) as error:
            raise Failed(
                status,
                f"{doing} raised {type(error).__name__}: {error}",
                _lines(instruments.user_traceback(error)),
            ) from None

    def step(self) -> None:
        run = self.run
        assert run is not None
        with self._failing_as(DATA_ERROR, f"drawing a batch from {self.stream.where}"):
            with record_function(phases.range_name(phases.DATA_WAIT)):
                batch = self.stream.next()
        with self._failing_as(DATA_ERROR, "copying the batch to the device"):
            with record_function(phases.range_name(phases.H2D_COPY)):
                run.batch = _to_device(batch, self.device)
            if self.batch_size is None:
                self.batch_size, self.tokens = batch_figures(tensors_in(run.batch))
        with self._failing_as(TRAIN_ERROR, "the forward pass"):
            with record_function(phases.range_name(phases.FORWARD)):
                loss = run.forward()
        with self._failing_as(TRAIN_ERROR, "the backward pass"):
            with record_function(phases.range_name(phases.BACKWARD)):
                loss.backward()
        with self._failing_as(TRAIN_ERROR, "the optimizer step"):
            with record_function(phases.range_name(phases.OPTIMIZER)):
                self.recipe.optimizer.step()
                metric = float(loss.detach()) if self.recipe.monitors_loss else 0.0
                self.recipe.step_scheduler(self.step_index, metric)
                with record_function(phases.range_name(phases.ZERO_GRAD)):
                    self._zero_grad()
        self.step_index += 1

    def _zero_grad(self) -> None:
        """As the project's training zeroes gradients: a LightningModule's own
        optimizer_zero_grad hook, else optimizer.zero_grad() as configured."""
        model = self.run.model if self.run else None
        if model is not None and overrides(model, "optimizer_zero_grad"):
            model.optimizer_zero_grad(0, self.step_index, self.recipe.optimizer)
        else:
            self.recipe.optimizer.zero_grad()

    def zero_grad_where(self, root: Path) -> str:
        """The project's zero_grad the step calls, as file:line; "" for torch's."""
        model = self.run.model if self.run else None
        if model is not None and overrides(model, "optimizer_zero_grad"):
            where = _source_of(type(model).optimizer_zero_grad)
        else:
            where = _source_of(type(self.recipe.optimizer).zero_grad)
        inside = where.startswith(str(root.resolve()) + os.sep)
        return where if inside and "-packages" not in where else ""

    def measure(self, request: Request, root: Path) -> Figures:
        for _ in range(request.warmup):
            self.step()
        step_seconds = thread_timing.time_steps(self.step, request.steps, self.device)
        steps_per_second = 1 / max(step_seconds, 1e-9)
        threads = thread_timing.with_other_threads(
            self.step, request.steps, self.device, step_seconds
        )
        cuda = device_kind(self.device) == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats(self.device)
        trace_path = Path(request.trace)
        tables: dict[str, Any] = {}

        def ready(profiler: Any) -> None:
            profiler.export_chrome_trace(str(trace_path))
            tables["top"] = machine.top_ops(profiler, cuda)

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with (
            machine.sync_points(root, cuda) as syncs,
            profile(
                activities=activities,
                schedule=schedule(wait=0, warmup=1, active=request.steps, repeat=1),
                on_trace_ready=ready,
                record_shapes=True,
                experimental_config=machine.sync_events() if cuda else None,
            ) as profiler,
        ):
            for _ in range(request.steps + 1):
                self.step()
                profiler.step()
            machine.synchronize(self.device)
        measured = trace.measure(trace.load_events(trace_path))
        figures = Figures(
            gate=self.settings.name,
            device=self.device,
            device_name=machine.device_name(self.device),
            steps=request.steps,
            warmup=request.warmup,
            batch_size=self.batch_size,
            steps_per_second=steps_per_second,
            profiled_steps_per_second=(
                1 / measured.step_seconds if measured.step_seconds else 0.0
            ),
            step_seconds=measured.step_seconds,
            split=measured.split,
            loader=self.stream.loader(),
            optimizer=self._optimizer(root),
            zero_grad_fills=measured.zero_grad_fills,
            top_ops=tables.get("top", []),
            model=self._model(),
            tokens_per_step=self.tokens,
            threads=threads,
        )
        figures.peak_memory_bytes, figures.peak_memory_of = machine.peak_memory(
            self.device
        )
        if cuda:
            figures.gpu = machine.gpu_figures(
                self.device, measured, syncs, measured.steps
            )
        return figures

    def _model(self) -> Model | None:
        model = self.run.model if self.run else None
        if not isinstance(model, torch.nn.Module):
            return None
        return Model(type(model).__name__, parameter_count(model))

    def _optimizer(self, root: Path) -> Optimizer:
        return optimizer_figures(
            self.recipe.optimizer, self.recipe.source, self.zero_grad_where(root)
        )


def optimizer_figures(
    optimizer: Any, source: str, zero_grad_where: str = ""
) -> Optimizer:
    groups = optimizer.param_groups
    defaults = getattr(optimizer, "defaults", {}) or {}
    return Optimizer(
        name=type(optimizer).__name__,
        source=source,
        parameter_tensors=sum(len(g["params"]) for g in groups),
        foreach=_setting(groups, "foreach"),
        fused=_setting(groups, "fused"),
        supports_foreach="foreach" in defaults,
        supports_fused="fused" in defaults,
        zero_grad_where=zero_grad_where,
    )


def _setting(groups: list[dict[str, Any]], key: str) -> bool | None:
    values = {group.get(key) for group in groups}
    return values.pop() if len(values) == 1 else None


def _to_device(batch: Any, device: str) -> Any:
    """``batch`` on ``device``; a pinned tensor is copied without blocking the host,
    as a pinned loader's training loop does."""
    target = placement(device)
    if device_kind(device) == "cpu":
        return batch
    return move(batch, target, [], pinned_async=True)


def _source_of(function: Any) -> str:
    try:
        lines, number = inspect.getsourcelines(function)
        return f"{inspect.getsourcefile(function)}:{number}"
    except (OSError, TypeError):
        return ""


def _where(spec: str, factory: Any, root: Path) -> str:
    """The batch callable as a user finds it, e.g.
    ``mypkg.data:loader (src/mypkg/data.py:12)``."""
    source = _source_of(factory)
    if not source:
        return spec
    path, _, line = source.rpartition(":")
    try:
        path = str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        pass
    return f"{spec} ({path}:{line})"


def _lines(text: str | None) -> list[str]:
    return [text] if text else []
