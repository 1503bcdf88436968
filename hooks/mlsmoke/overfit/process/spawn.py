"""Run a job (a gate, an evaluation, a profile) in the project's interpreter,
supervised.

The worker's own output (the project's prints, torch's warnings) is captured and shown
with ``-v`` or when the worker dies. Progress comes through a pipe of its own and is
drawn as one live line, on a terminal only. Each gate's start comes through it too:
from then on the worker has the gate's ``timeout`` plus ``KILL_GRACE`` seconds before
it is killed (``watchdog.py``), and the report says what it was doing then.

A stop from outside (Ctrl-C, SIGTERM, SIGHUP) is passed on to the worker, which is
reaped before the temporary directory goes. The worker leads a process group of its own
(``process_group.py``): whatever the project's code started in it is killed with it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from mlsmoke.errors import EnvironmentProblem, Terminated
from mlsmoke.job_imports import GATE, GATE_JOB
from mlsmoke.overfit.process.deaths import WorkerEnd
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.project_process import (
    ProjectProcess,
    WorkerUse,
    start_project_process,
)
from mlsmoke.warm.client import WarmJob
from mlsmoke.watchdog import Watchdog
from mlsmoke.overfit.verdict.report import progress_line

# Before the first gate starts: the worker imports torch and mlsmoke's gate.
STARTUP_LIMIT = 120.0
# After a gate's timeout: time for the worker's own stack dump (1 s), then the kill.
KILL_GRACE = 2.5
STOP_GRACE = 2.0  # for a stopped worker to exit before it is killed
# (name, step, of how many, loss, steps/s) -> the live line drawn on a terminal
ProgressLine = Callable[[str, int, int, float, float], str]


def spawn(
    root: Path,
    python: Path,
    gates: list[GateSettings],
    args: list[str],
    output: Path,
    module: str = GATE_JOB,
    warm: WorkerUse = WorkerUse.NONE,
    first_use: Sequence[str] = GATE,
    line: ProgressLine = progress_line,
) -> WorkerEnd:
    """Run ``module``'s main(args + [progress fd]) in ``python`` (forked from the warm
    worker as ``warm`` allows), in a process group of its own, under the watchdog: each
    ``{"gate", "start": timeout}`` line it sends gives it that long; Ctrl-C, SIGTERM
    and SIGHUP are passed on and it is reaped."""
    read_end, write_end = os.pipe()
    with output.open("wb") as sink:
        try:
            worker = start_project_process(
                root, python, module, args, sink.fileno(), write_end, warm, first_use
            )
        except OSError as error:
            os.close(read_end)
            raise EnvironmentProblem(
                f"{python}: cannot run: {error.strerror}"
            ) from None
        finally:
            os.close(write_end)
        watchdog = Watchdog(worker.kill, STARTUP_LIMIT)
        progress = _ProgressDrawer(os.fdopen(read_end), gates, watchdog, line)
        progress.start()
        watchdog.start()
        try:
            # A blocking wait: a polling one would cost every gate run up to 50 ms.
            worker.wait_exited()
        except BaseException as stop:  # Ctrl-C, SIGTERM, SIGHUP: pass it on, reap
            _stop(worker, _signal_of(stop))
            raise
        finally:
            watchdog.finish()
            watchdog.join()  # its kill, if it came, came before the reaping
            code, peak = worker.end()
            progress.join(timeout=1)
        forked = isinstance(worker, WarmJob)
        return WorkerEnd(
            code, peak, progress.gate, watchdog.expired_after, forked=forked
        )


def _signal_of(stop: BaseException) -> int:
    if isinstance(stop, Terminated):
        return stop.signum
    return signal.SIGINT if isinstance(stop, KeyboardInterrupt) else signal.SIGTERM


def _stop(worker: ProjectProcess, signum: int) -> None:
    """Send ``signum`` to the worker's group; kill the group if the worker is still
    there after STOP_GRACE."""
    try:
        worker.signal(signum)
        if worker.wait_exited(STOP_GRACE):
            return
    except BaseException:  # a second signal: no more patience
        worker.kill()
        raise
    worker.kill()


class _ProgressDrawer(threading.Thread):
    """Reads the worker's progress lines; tells the watchdog each gate's start, and
    draws the progress when stderr is a terminal."""

    def __init__(
        self,
        stream: IO[str],
        gates: list[GateSettings],
        watchdog: Watchdog | None = None,
        line: ProgressLine = progress_line,
    ) -> None:
        super().__init__(daemon=True)
        self.line = line
        self.stream = stream
        self.max_steps = {gate.name: gate.max_steps for gate in gates}
        self.live = sys.stderr.isatty()
        self.watchdog = watchdog
        self.gate: str | None = None  # the gate that started last

    def run(self) -> None:
        started: dict[str, float] = {}
        drawn = False
        with self.stream:
            for line in self.stream:
                try:
                    event = json.loads(line)
                    gate = event["gate"]
                    if "start" in event:
                        self.gate = gate
                        if self.watchdog is not None:
                            self.watchdog.extend(float(event["start"]) + KILL_GRACE)
                        continue
                    step, loss = event["step"], event["loss"]
                except (ValueError, KeyError, TypeError):
                    continue
                if not self.live:
                    continue
                now = time.monotonic()
                started.setdefault(gate, now)
                rate = step / (now - started[gate]) if now > started[gate] else 0.0
                of = event.get("of", self.max_steps.get(gate, 0))
                text = self.line(gate, step, of, loss, rate)
                sys.stderr.write(f"\r\033[K{text}")
                sys.stderr.flush()
                drawn = True
        if drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
