"""Run a command in a fresh process and measure its wall time and peak memory.

Peak memory is the largest resident set size of the process or of any descendant it
waited for, as ``wait4`` reports it for that one child. So the figure is per run, not
the maximum over every child this benchmark process ever started.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcessRun:
    seconds: float
    peak_rss_mib: float
    returncode: int
    stdout: str
    stderr: str
    cpu_seconds: float = (
        0.0  # user + system time of the process and its waited children
    )

    def check(self, what: str) -> ProcessRun:
        """This run, or RuntimeError with its output when it failed."""
        if self.returncode != 0:
            tail = (self.stdout + self.stderr)[-2000:]
            raise RuntimeError(f"{what} exited {self.returncode}:\n{tail}")
        return self


def run_process(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 900,
) -> ProcessRun:
    """Run ``argv`` to completion; a run past ``timeout`` seconds is killed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        killer = threading.Timer(timeout, process.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            killer.cancel()
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ProcessRun(
            seconds=seconds,
            peak_rss_mib=usage.ru_maxrss / 1024,  # Linux reports KiB
            returncode=process.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            cpu_seconds=usage.ru_utime + usage.ru_stime,
        )


@dataclass(frozen=True)
class Summary:
    """Medians over repeated runs of one command."""

    seconds: float
    peak_rss_mib: float
    repeats: int

    @classmethod
    def of(cls, runs: Sequence[ProcessRun]) -> Summary:
        return cls(
            seconds=statistics.median(run.seconds for run in runs),
            peak_rss_mib=statistics.median(run.peak_rss_mib for run in runs),
            repeats=len(runs),
        )


def ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:.2f}x"


def directory_mib(path: Path) -> float:
    """The disk usage of a directory tree, counting each hard-linked file once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(directory, name))
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_blocks * 512
    return total / 2**20
