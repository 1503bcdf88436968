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
import platform
import resource
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from mlsmoke.overfit.gate import NotConfigured, prepare
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training import instruments, setup
from mlsmoke.overfit.training.adapters.lightning_module import overrides
from mlsmoke.overfit.training.device import (
    device_kind,
    map_tensors,
    placement,
    restore_cpu_threads,
    tensors_in,
)
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.training.run_state import TrainingRun
from mlsmoke.profile import phases, trace
from mlsmoke.profile.batches import BatchStream
from mlsmoke.profile.figures import Figures, Gpu, Optimizer, SyncPoint

OK, CONFIG_ERROR, DATA_ERROR, TRAIN_ERROR = (
    "ok",
    "config-error",
    "data-error",
    "train-error",
)
TOP_OPS = 10


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
                tensors = tensors_in(run.batch)
                if tensors and tensors[0].dim() > 0:
                    self.batch_size = int(tensors[0].shape[0])
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
        _synchronize(self.device)
        started = time.perf_counter()
        for _ in range(request.steps):
            self.step()
        _synchronize(self.device)
        steps_per_second = request.steps / max(time.perf_counter() - started, 1e-9)
        cuda = device_kind(self.device) == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats(self.device)
        trace_path = Path(request.trace)
        tables: dict[str, Any] = {}

        def ready(profiler: Any) -> None:
            profiler.export_chrome_trace(str(trace_path))
            tables["top"] = _top_ops(profiler, cuda)

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with (
            _sync_points(root, cuda) as syncs,
            profile(
                activities=activities,
                schedule=schedule(wait=0, warmup=1, active=request.steps, repeat=1),
                on_trace_ready=ready,
                record_shapes=True,
                experimental_config=_sync_events() if cuda else None,
            ) as profiler,
        ):
            for _ in range(request.steps + 1):
                self.step()
                profiler.step()
            _synchronize(self.device)
        measured = trace.measure(trace.load_events(trace_path))
        figures = Figures(
            gate=self.settings.name,
            device=self.device,
            device_name=_device_name(self.device),
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
        )
        figures.peak_memory_bytes, figures.peak_memory_of = _peak_memory(self.device)
        if cuda:
            figures.gpu = _gpu(self.device, measured, syncs, measured.steps)
        return figures

    def _optimizer(self, root: Path) -> Optimizer:
        optimizer = self.recipe.optimizer
        groups = optimizer.param_groups
        defaults = getattr(optimizer, "defaults", {}) or {}
        return Optimizer(
            name=type(optimizer).__name__,
            source=self.recipe.source,
            parameter_tensors=sum(len(g["params"]) for g in groups),
            foreach=_setting(groups, "foreach"),
            fused=_setting(groups, "fused"),
            supports_foreach="foreach" in defaults,
            supports_fused="fused" in defaults,
            zero_grad_where=self.zero_grad_where(root),
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
    return map_tensors(batch, lambda t: t.to(target, non_blocking=bool(t.is_pinned())))


def _synchronize(device: str) -> None:
    """Wait for the device's queued work: outside the steps only, to time them."""
    if device_kind(device) == "cuda":
        torch.cuda.synchronize(device)
    elif device_kind(device) == "mps":
        torch.mps.synchronize()


def _sync_events() -> Any:
    """The profiler's cuda_sync events, where this torch has them."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        return _ExperimentalConfig(enable_cuda_sync_events=True)
    except (ImportError, TypeError):
        return None


@contextmanager
def _sync_points(root: Path, cuda: bool) -> Iterator[dict[tuple[str, str], int]]:
    """Counts of CPU-GPU synchronizations by the project's source line, from
    torch.cuda.set_sync_debug_mode("warn") (which warns at each one)."""
    found: dict[tuple[str, str], int] = {}
    if not cuda:
        yield found
        return
    show = warnings.showwarning

    def record(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if "synchroniz" not in str(message):
            return show(message, category, *args, **kwargs)
        frame = project_frame(traceback.extract_stack(), root)
        if frame is not None:
            key = (f"{frame.filename}:{frame.lineno}", (frame.line or "").strip())
            found[key] = found.get(key, 0) + 1

    previous = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = record
        torch.cuda.set_sync_debug_mode("warn")
        try:
            yield found
        finally:
            torch.cuda.set_sync_debug_mode(previous)


def project_frame(
    stack: list[traceback.FrameSummary], root: Path
) -> traceback.FrameSummary | None:
    """The innermost frame of the project's own code under ``root``: not mlsmoke's,
    not an installed package's."""
    top = str(root.resolve())
    for frame in reversed(stack):
        name = os.path.abspath(frame.filename)
        if not name.startswith(top + os.sep) or instruments._in_package(name):
            continue
        if "site-packages" in name or "dist-packages" in name:
            continue
        return frame
    return None


def _gpu(
    device: str, measured: trace.Measured, syncs: dict[tuple[str, str], int], steps: int
) -> Gpu:
    index = torch.device(device).index or 0
    tf32 = bool(torch.backends.cuda.matmul.allow_tf32) or (
        torch.get_float32_matmul_precision() != "highest"
    )
    gpu = Gpu(
        name=torch.cuda.get_device_name(index),
        capability=list(torch.cuda.get_device_capability(index)),
        tf32=tf32,
        **measured.gpu,
    )
    gpu.syncs = [
        SyncPoint(where, code, count / max(steps, 1))
        for (where, code), count in sorted(syncs.items(), key=lambda kv: -kv[1])
    ]
    return gpu


def _top_ops(profiler: Any, cuda: bool) -> list[dict[str, Any]]:
    rows = []
    for average in profiler.key_averages():
        name = average.key
        if name.startswith((phases.PREFIX, trace.STEP_PREFIX.rstrip("#"))):
            continue
        self_cpu = float(average.self_cpu_time_total)
        self_device = float(getattr(average, "self_device_time_total", 0.0) or 0.0)
        rows.append(
            {
                "name": name,
                "calls": int(average.count),
                "self_cpu_seconds": self_cpu / 1e6,
                "self_device_seconds": self_device / 1e6,
            }
        )
    key = "self_device_seconds" if cuda else "self_cpu_seconds"
    rows.sort(key=lambda row: -row[key])
    return rows[:TOP_OPS]


def _peak_memory(device: str) -> tuple[int, str]:
    if device_kind(device) == "cuda":
        return int(torch.cuda.max_memory_allocated(device)), "tensors on the device"
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(kib) * 1024, "resident set of the process"


def _device_name(device: str) -> str:
    if device_kind(device) == "cuda":
        return torch.cuda.get_device_name(torch.device(device).index or 0)
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{device_kind(device)}: {model or platform.processor() or platform.machine()}"
    )


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
