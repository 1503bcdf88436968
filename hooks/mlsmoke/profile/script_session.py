"""One profile of a training script, inside the project's interpreter.

The script runs as ``python SCRIPT ARGS`` runs it (script mode's ``Script`` and
``as_a_process``: ``sys.argv``, the torchrun variables unset, ``{out_dir}`` a temporary
directory), unpinned, on its own data, while ``script_points.py`` marks its updates'
phases. At the end of each update the session moves through the stages of
``script_stages.py``: warm-up, timed updates at the process's thread count and (on
the CPU) at the other, then profiled updates under ``torch.profiler``; then
``ScriptStopped``, raised from the optimizer's step hook, ends the script.
"""

from __future__ import annotations

import ast
import builtins
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, schedule

from mlsmoke.overfit.training import instruments
from mlsmoke.overfit.training.device import device_kind
from mlsmoke.overfit.training.script_frames import innermost_project_line
from mlsmoke.overfit.training.script_globals import give_globals
from mlsmoke.overfit.training.script_points import ScriptStopped
from mlsmoke.overfit.training.script_process import Script, as_a_process
from mlsmoke.profile import machine, phases, script_errors, script_stages, trace
from mlsmoke.profile.figures import Figures, Loader, Threads
from mlsmoke.profile.model_size import model_figure
from mlsmoke.profile.script_points import (
    DATA_GAP,
    DATA_LOADER,
    ScriptPoints,
    UpdateSize,
    instrumented,
)
from mlsmoke.profile.session import (
    CONFIG_ERROR,
    OK,
    TRAIN_ERROR,
    Failed,
    Request,
    optimizer_figures,
)
from mlsmoke.profile.targets import ScriptTarget
from mlsmoke.profile.thread_timing import clearly_slower, other_thread_count

DATA_FROM = {
    DATA_LOADER: "DataLoader.__next__ of the script's training iterators",
    DATA_GAP: "each optimizer.step()'s end to the next update's first forward",
}


def profile_script(
    target: ScriptTarget, request: Request, root: Path
) -> dict[str, Any]:
    """``{"gate", "status", "message", "evidence", "figures"}`` for one script."""
    outcome: dict[str, Any] = {"gate": target.name, "status": OK}
    try:
        outcome["figures"] = _ScriptProfile(target, request, root).run().to_json()
    except Failed as failed:
        outcome.update(
            status=failed.status, message=failed.message, evidence=failed.evidence
        )
    return outcome


class _ScriptProfile:
    def __init__(self, target: ScriptTarget, request: Request, root: Path) -> None:
        self.target, self.request, self.root = target, request, root
        self.script = Script(root, target.path, list(target.args),
                             globals=dict(target.globals))  # fmt: skip
        self.points = ScriptPoints(root, self._update_ended)
        self.stages: list[str] = []
        self.ended: list[float] = []
        self.default_threads = torch.get_num_threads()
        self.other_threads: int | None = None
        self.profiler: Any = None
        self.top_ops: list[dict[str, Any]] = []
        self.trace_error = ""

    def run(self) -> Figures:
        code = self._compile()
        namespace = {"__name__": "__main__", "__file__": str(self.script.file),
                     "__builtins__": builtins}  # fmt: skip
        with as_a_process(self.script) as stderr, instrumented(self.points):
            try:
                exec(code, namespace)
            except ScriptStopped:
                pass
            except (Exception, SystemExit) as error:
                self._failed(error, stderr.getvalue())
            finally:
                self._stop_profiler()
                torch.set_num_threads(self.default_threads)
        self._check_complete()
        if self.trace_error:
            raise Failed(CONFIG_ERROR, f"--trace: cannot write {self.trace_error}")
        return self._figures()

    def _compile(self) -> Any:
        try:
            source = self.script.file.read_bytes()
            tree = ast.parse(source, filename=str(self.script.file))
        except (OSError, SyntaxError, ValueError) as error:
            key = self.target.key("script")
            raise Failed(
                CONFIG_ERROR, f"{key}: {self.script.path}: cannot be read: {error}"
            ) from None
        missing = give_globals(tree, self.script.globals)
        if missing:
            raise Failed(
                CONFIG_ERROR,
                f"{self.target.globals_key}.{missing[0]}: {self.script.path} has no"
                f" module-level assignment `{missing[0]} = ...` whose value the"
                " profile could give",
            )
        return compile(tree, str(self.script.file), "exec")

    # the stages, at the end of each update

    def _update_ended(self, index: int) -> None:
        if not self.stages:
            self._plan()
        if index >= len(self.stages):
            raise ScriptStopped  # the script caught the first one
        stage = self.stages[index]
        following = self.stages[index + 1] if index + 1 < len(self.stages) else None
        if stage in script_stages.PROFILING:
            self.profiler.step()
        if stage == script_stages.OTHER_THREADS and self._other_clearly_slower(index):
            self.stages = script_stages.cut_short(self.stages, index)
            following = self.stages[index + 1]
        if following != stage:
            machine.synchronize(self.points.device)
        self.ended.append(time.perf_counter())
        if following != stage:
            self._enter(following, stage)
        if following is None:
            raise ScriptStopped

    def _plan(self) -> None:
        if device_kind(self.points.device) == "cpu":
            self.other_threads = other_thread_count(
                self.default_threads, machine.cpu_count()
            )
        other = self.other_threads is not None
        self.stages = script_stages.plan(self.request.warmup, self.request.steps, other)
        self.points.watch_modules(True)  # the warm-up measures the batch

    def _other_clearly_slower(self, index: int) -> bool:
        first = self.stages.index(script_stages.OTHER_THREADS)
        timed = script_stages.stage_seconds(
            self.stages, self.ended, script_stages.TIMED
        )
        seconds = time.perf_counter() - self.ended[first - 1]
        return bool(timed) and clearly_slower(seconds, index - first + 1, timed)

    def _enter(self, stage: str | None, previous: str) -> None:
        if previous == script_stages.WARMUP:
            self.points.watch_modules(False)
        if stage == script_stages.OTHER_THREADS:
            torch.set_num_threads(self.other_threads or self.default_threads)
        elif previous == script_stages.OTHER_THREADS:
            torch.set_num_threads(self.default_threads)
        if stage == script_stages.PROFILER_WARMUP:
            self.points.watch_modules(True)
            self.points.data_mode = DATA_LOADER if self.points.loader else DATA_GAP
            self.points.recording = True
            self._start_profiler()
        elif stage is None:
            self._stop_profiler()

    def _start_profiler(self) -> None:
        device = self.points.device
        cuda = device_kind(device) == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)

        def ready(profiler: Any) -> None:
            try:
                profiler.export_chrome_trace(self.request.trace)
            except OSError as error:
                self.trace_error = f"{self.request.trace}: {error.strerror or error}"
            self.top_ops = machine.top_ops(profiler, cuda)

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        self.profiler = profile(
            activities=activities,
            schedule=schedule(wait=0, warmup=1, active=self.request.steps, repeat=1),
            on_trace_ready=ready,
            record_shapes=True,
        )
        self.profiler.start()

    def _stop_profiler(self) -> None:
        self.points.recording = False
        self.points.close_ranges()
        if self.profiler is not None:
            profiler, self.profiler = self.profiler, None
            with suppress(Exception):  # a failed run's: its error is the news
                profiler.stop()

    # how it ended

    def _failed(self, error: BaseException, stderr: str) -> None:
        command, points = self.script.command(), self.points
        if points.optimizer is None:
            if isinstance(error, SystemExit) and error.code in (0, None):
                return  # it ended: _check_complete says it never trained
            if isinstance(error, SystemExit):
                said = script_errors.last_lines(stderr)
                message = script_errors.exited(command, error.code, stderr)
                blamed = script_errors.blamed(self.script.args, error.code, said)
            else:
                line = innermost_project_line(self.root, error)
                message = script_errors.raised(command, error, line)
                blamed = script_errors.blamed(self.script.args, None, str(error))
            raise Failed(CONFIG_ERROR, f"{self.target.key(blamed)}: {message}")
        if isinstance(error, SystemExit) and error.code in (0, None):
            return  # it ended itself: _check_complete says whether that was enough
        where = f" in the {points.phase}" if points.phase != "script" else ""
        said = f"{type(error).__name__}: {error}"
        if isinstance(error, SystemExit):
            said = f"exit status {error.code}: {script_errors.last_lines(stderr)}"
        raise Failed(
            TRAIN_ERROR,
            f"`{command}` stopped with {said}{where}, after {points.updates}"
            " optimizer updates",
            [instruments.user_traceback(error)] if error.__traceback__ else [],
        )

    def _check_complete(self) -> None:
        command, points = self.script.command(), self.points
        if points.optimizer is None:
            key = self.target.key("script")
            raise Failed(CONFIG_ERROR, f"{key}: {script_errors.never_trained(command)}")
        if points.updates == 0:
            key = self.target.key("args" if self.script.args else "script")
            name = type(points.optimizer).__name__
            message = script_errors.never_stepped(command, name, points.optimizer_site)
            raise Failed(CONFIG_ERROR, f"{key}: {message}")
        if points.updates < len(self.stages):
            request = self.request
            at_other = (
                f", up to {request.steps} at {self.other_threads} threads"
                if self.other_threads
                else ""
            )
            options = (
                f"--warmup {max(request.warmup, 1)}, --steps {request.steps} timed"
                f"{at_other}, 1 + {request.steps} profiled"
            )
            message = script_errors.ended_early(
                command, points.updates, len(self.stages), options
            )
            key = self.target.key("args" if self.script.args else "script")
            raise Failed(CONFIG_ERROR, f"{key}: {message}")

    # the figures

    def _figures(self) -> Figures:
        points, request = self.points, self.request
        device = points.device
        measured = trace.measure(trace.load_events(Path(request.trace)))
        split = dict(measured.split)
        split.pop(phases.H2D_COPY, None)  # the script copies its batch itself
        timed = script_stages.stage_seconds(
            self.stages, self.ended, script_stages.TIMED
        )
        size = points.sized or UpdateSize()
        forwards = max(size.forwards, 1)
        assert points.optimizer is not None
        figures = Figures(
            gate=self.target.name,
            device=device,
            device_name=machine.device_name(device),
            steps=request.steps,
            warmup=max(request.warmup, 1),
            batch_size=size.samples // forwards if size.samples else None,
            steps_per_second=1 / timed if timed else 0.0,
            profiled_steps_per_second=(
                1 / measured.step_seconds if measured.step_seconds else 0.0
            ),
            step_seconds=measured.step_seconds,
            split=split,
            loader=self._loader(),
            optimizer=optimizer_figures(points.optimizer, points.optimizer_site),
            top_ops=self.top_ops,
            model=model_figure(points.model, self.root),
            forwards_per_step=forwards,
            tokens_per_step=size.tokens,
            threads=self._threads(timed),
            script=self.script.command(),
            data_from=DATA_FROM[points.data_mode],
        )
        figures.peak_memory_bytes, figures.peak_memory_of = machine.peak_memory(device)
        if device_kind(device) == "cuda":
            figures.gpu = machine.gpu_figures(device, measured, {}, measured.steps)
        return figures

    def _threads(self, timed: float | None) -> Threads | None:
        if device_kind(self.points.device) != "cpu" or not timed:
            return None
        other = script_stages.stage_seconds(
            self.stages, self.ended, script_stages.OTHER_THREADS
        )
        return Threads(self.default_threads, timed, self.other_threads, other)

    def _loader(self) -> Loader:
        seen, cpus = self.points.loader, machine.cpu_count()
        if seen is None:
            return Loader("loop without a DataLoader", self.script.path, cpu_count=cpus)
        return Loader("DataLoader", seen.where or self.script.path, seen.num_workers,
                      seen.pin_memory, seen.batch_size, cpus)  # fmt: skip
