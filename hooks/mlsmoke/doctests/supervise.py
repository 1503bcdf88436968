"""Run the runner with a time limit per file, keeping only the tail of its output.

The runner says when each file and each example starts, and each failure. A file that
is not done within ``timeout`` seconds is a failure naming the example that was
running; the runner is killed and started again for the files after it. So is a file
whose example ends the interpreter (``os._exit``, a crash): that example fails, after
the failures found before it. Ctrl-C, SIGTERM and SIGHUP kill the
runner and reap it before the temporary directory goes. The runner leads a process
group of its own (``process_group.py``): what the examples started goes with it.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

from mlsmoke.doctests.results import (
    ExampleFailure,
    FileFailure,
    FileResult,
    results_from_json,
)
from mlsmoke.errors import EnvironmentProblem, Terminated
from mlsmoke.job_imports import DOCTEST, DOCTEST_JOB
from mlsmoke.process_end import how_it_ended
from mlsmoke.project_process import WorkerUse, start_project_process, warm_then_cold
from mlsmoke.scratch import scratch_directory
from mlsmoke.watchdog import Watchdog

OUTPUT_KEPT = 64 * 1024  # bytes of the runner's own output the hook keeps
_OUTPUT_TAIL_LINES = 30
_FILES_NAMED = 5  # in the message of a runner that died
_LINE_WIDTH = 200


class Job(NamedTuple):
    """A file to run: how the user named it, and where it is."""

    shown: str
    path: Path


@dataclass
class _Run:
    """One start of the runner: its results, and where it was when it ended."""

    results: list[FileResult]
    code: int
    output: str
    timed_out: bool = False
    running: dict = field(default_factory=dict)  # the last start event
    failed: list[ExampleFailure] = field(default_factory=list)  # in the running file


def run_with_time_limits(
    python: Path,
    jobs: Sequence[Job],
    root: Path,
    options: Mapping[str, Any],
    timeout: float,
    warm: WorkerUse = WorkerUse.WAIT,
) -> list[FileResult]:
    """Every job's result; a file past ``timeout`` fails, the others still run, and
    so does a file whose examples end the interpreter. ``warm``: how the runner may
    use the warm worker. A KeyboardInterrupt or Terminated on the way out carries the
    results found so far as ``.results``."""
    done: dict[str, FileResult] = {}
    pending = list(jobs)
    try:
        while pending:
            run = warm_then_cold(
                lambda use: _run_once(python, pending, root, options, timeout, use),
                warm,
            )
            done.update((result.path, result) for result in run.results)
            left = [job for job in pending if job.shown not in done]
            if not left:
                break
            stuck = run.running.get("file")
            if stuck is None or stuck not in {job.shown for job in left}:
                raise EnvironmentProblem(_no_report_message(python, left, run))
            ended = _timed_out if run.timed_out else _interpreter_ended
            done[stuck] = ended(stuck, timeout, run)
            pending = [job for job in left if job.shown != stuck]
    except (KeyboardInterrupt, Terminated) as stop:
        done.update((result.path, result) for result in getattr(stop, "results", []))
        stop.results = [done[job.shown] for job in jobs if job.shown in done]
        raise
    return [done[job.shown] for job in jobs if job.shown in done]


def _run_once(
    python: Path,
    jobs: list[Job],
    root: Path,
    options: Mapping[str, Any],
    timeout: float,
    warm: WorkerUse,
) -> _Run:
    with scratch_directory("doctest") as scratch:
        request, report = Path(scratch, "request.json"), Path(scratch, "report.json")
        request.write_text(
            json.dumps(
                {
                    "root": str(root),
                    "files": [[job.shown, str(job.path)] for job in jobs],
                    **options,
                }
            ),
            encoding="utf-8",
        )
        try:
            code, output, watchdog, events = _supervise(
                python, [str(request), str(report)], root, timeout, warm
            )
        except (KeyboardInterrupt, Terminated) as stop:
            stop.results = _read_report(report)
            raise
        expired = watchdog.expired_after is not None
        return _Run(
            _read_report(report), code, output, expired, events.running, events.failed
        )


def _read_report(report: Path) -> list[FileResult]:
    """The results the runner appended, one JSON line per file; a line cut short by
    the runner's end is left out."""
    try:
        lines = report.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    results = []
    for line in lines:
        try:
            results += results_from_json([json.loads(line)])
        except (ValueError, LookupError, TypeError):
            continue
    return results


def _supervise(
    python: Path, args: list[str], root: Path, timeout: float, warm: WorkerUse
) -> tuple[int, str, Watchdog, _Events]:
    read_end, write_end = os.pipe()
    output_read, output_write = os.pipe()
    try:
        runner = start_project_process(
            root, python, DOCTEST_JOB, args, output_write, write_end, warm, DOCTEST
        )
    except OSError as error:
        os.close(read_end)
        os.close(output_read)
        raise EnvironmentProblem(f"{python}: cannot run: {error.strerror}") from None
    finally:
        os.close(write_end)
        os.close(output_write)
    watchdog = Watchdog(runner.kill, timeout)
    events = _Events(os.fdopen(read_end), watchdog, timeout)
    tail = _Tail(os.fdopen(output_read, "rb"))
    for thread in (watchdog, events, tail):
        thread.start()
    try:
        runner.wait_exited()
    except BaseException:  # Ctrl-C, SIGTERM, SIGHUP: the runner goes first
        runner.kill()
        raise
    finally:
        watchdog.finish()
        watchdog.join()  # its kill, if it came, came before the reaping
        code, _ = runner.end()
        events.join(timeout=1)
        tail.join(timeout=1)
    return code, tail.text(), watchdog, events


class _Events(threading.Thread):
    """Reads the runner's start events; each file gets ``timeout`` from its start."""

    def __init__(self, stream: IO[str], watchdog: Watchdog, timeout: float) -> None:
        super().__init__(daemon=True)
        self.stream, self.watchdog, self.timeout = stream, watchdog, timeout
        self.running: dict = {}
        self.failed: list[ExampleFailure] = []

    def run(self) -> None:
        with self.stream:
            for line in self.stream:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                if "failure" in event:
                    self._failed(event["failure"])
                    continue
                if "line" not in event:
                    self.watchdog.extend(self.timeout)
                    self.failed = []
                self.running = event

    def _failed(self, failure: Any) -> None:
        try:
            self.failed.append(ExampleFailure(**failure))
        except TypeError:
            pass


class _Tail(threading.Thread):
    """Reads a stream to its end, keeping its last OUTPUT_KEPT bytes only."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.chunks: deque[bytes] = deque()
        self.size = 0

    def run(self) -> None:
        with self.stream:
            while chunk := self.stream.read1(OUTPUT_KEPT):  # type: ignore[attr-defined]
                self.chunks.append(chunk)
                self.size += len(chunk)
                while self.size - len(self.chunks[0]) >= OUTPUT_KEPT:
                    self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks)[-OUTPUT_KEPT:].decode("utf-8", "replace")


def _timed_out(shown: str, timeout: float, run: _Run) -> FileResult:
    running = run.running if run.running.get("file") == shown else {}
    if "line" in running:
        source = running.get("source", "").rstrip("\n").replace("\n", "\n    ... ")
        doing = f"the example at line {running['line']} was running:\n    >>> {source}"
    else:
        doing = "its module was still importing (no example had started)"
    lines = [doing] + _last_lines(run.output, 10, "its last output:")
    summary = f"timed out after {timeout:g} s"
    failure = FileFailure(summary, "\n".join(lines), "")
    return FileResult(shown, len(run.failed), run.failed, failure)


def _interpreter_ended(shown: str, timeout: float, run: _Run) -> FileResult:
    """The file whose example (or import) ended the interpreter: that example fails,
    after the failures found before it."""
    running = run.running if run.running.get("file") == shown else {}
    ended = f"the interpreter {how_it_ended(run.code)}"
    output = _last_lines(run.output, 10, "its last output:")
    if "line" not in running:
        detail = "\n".join([f"{ended} while importing the module", *output])
        failure = FileFailure("cannot import the module", detail, "")
        return FileResult(shown, 0, run.failed, failure)
    got = "\n".join([f"{ended} during this example", *output]) + "\n"
    killer = ExampleFailure(
        running["line"], "", running.get("source", ""), "", got, True
    )
    return FileResult(shown, len(run.failed) + 1, [*run.failed, killer], None)


def _last_lines(output: str, count: int, title: str) -> list[str]:
    lines = [line[:_LINE_WIDTH] for line in output.rstrip().splitlines()[-count:]]
    return [title, *(f"  {line}" for line in lines)] if lines else []


def _no_report_message(python: Path, jobs: list[Job], run: _Run) -> str:
    running = ", ".join(job.shown for job in jobs[:_FILES_NAMED])
    if len(jobs) > _FILES_NAMED:
        running += f" and {len(jobs) - _FILES_NAMED} more"
    lines = [f"{python} {how_it_ended(run.code)} before reporting on {running}"]
    return "\n".join(
        lines + _last_lines(run.output, _OUTPUT_TAIL_LINES, "its last output:")
    )
