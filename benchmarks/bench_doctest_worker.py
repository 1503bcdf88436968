"""The doctest hook on five numpy-only files, the warm worker on and off.

The worker imports torch before it takes a job; a run whose files need no torch must
not wait for that. Each repeat runs ``mlsmoke doctest --no-cache`` on the same five
files three ways, interleaved: the worker off (``MLSMOKE_WORKER=0``); on with no
worker running (the hook must not start one, nor wait); on with a ready worker (it may
take the job at once). The figure is the ratio of medians to the worker off.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from benchmarks.machine import load_average
from benchmarks.measure import ProcessRun, Summary, ratio, run_process
from benchmarks.report import Section

FILES = 5
MODULE = textwrap.dedent('''
    """Means of arrays.

    >>> import numpy
    >>> mean(numpy.arange(4))
    1.5
    """
    import numpy


    def mean(values):
        """The mean.

        >>> mean([1, 2, 3])
        2.0
        """
        return float(numpy.mean(values))
    ''')
WAYS = ("worker off", "worker on, none running", "worker on, ready")


def run(quick: bool) -> Section:
    repeats = 2 if quick else 7
    loads = [load_average()]
    with tempfile.TemporaryDirectory(prefix="bench-doctest-worker-") as scratch:
        root = _project(Path(scratch))
        env = {**os.environ, "MLSMOKE_WORKER_DIR": str(Path(scratch, "workers"))}
        runs: dict[str, list[ProcessRun]] = {way: [] for way in WAYS}
        for _ in range(repeats):
            for way in WAYS:
                runs[way].append(_doctest(root, env, way))
            loads.append(load_average())
        _mlsmoke(root, {**env, "MLSMOKE_WORKER": "1"}, "worker", "stop")
    off = Summary.of(runs[WAYS[0]]).seconds
    rows = [
        [way, f"{Summary.of(runs[way]).seconds:.2f}", ratio(
            Summary.of(runs[way]).seconds, off
        )]
        for way in WAYS
    ]  # fmt: skip
    return Section(
        title="doctest on five numpy-only files: the warm worker on and off",
        columns=["", "seconds (median)", "vs worker off"],
        rows=rows,
        notes=[
            f"median of {repeats} runs each, interleaved; `mlsmoke doctest --no-cache`"
            f" on {FILES} files whose module and examples import numpy only; the"
            " project's dependencies are numpy and torch, as the template's",
            f"{os.cpu_count()} cores; load average at the start and after each round: "
            + " | ".join(loads),
        ],
    )


def _project(scratch: Path) -> Path:
    root = scratch / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "stats"\ndependencies = ["numpy", "torch"]\n\n'
        f'[tool.mlsmoke]\npython = "{sys.executable}"\n'
    )
    for i in range(FILES):
        (root / f"stats{i}.py").write_text(MODULE)
    return root


def _doctest(root: Path, env: dict[str, str], way: str) -> ProcessRun:
    on = {**env, "MLSMOKE_WORKER": "0" if way == WAYS[0] else "1"}
    if way == WAYS[1]:
        _stopped(root, on)
    if way == WAYS[2]:
        _ready(root, on)
    files = [f"stats{i}.py" for i in range(FILES)]
    return _mlsmoke(root, on, "doctest", "--no-cache", *files).check(way)


def _stopped(root: Path, env: dict[str, str]) -> None:
    """No worker: a stopped one that still answers would be taken for the next."""
    _mlsmoke(root, env, "worker", "stop")
    deadline = time.monotonic() + 30
    while "no worker is running" not in _mlsmoke(root, env, "worker", "status").stdout:
        if time.monotonic() > deadline:
            raise RuntimeError("the worker did not stop")
        time.sleep(0.1)


def _ready(root: Path, env: dict[str, str]) -> None:
    """A listening worker, done with its first-use imports."""
    _mlsmoke(root, env, "worker", "start")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = _mlsmoke(root, env, "worker", "status").stdout
        if "\nworker " in status and "importing" not in status:
            return
        time.sleep(0.2)
    raise RuntimeError(f"the worker did not become ready: {status}")


def _mlsmoke(root: Path, env: dict[str, str], *args: str) -> ProcessRun:
    return run_process([sys.executable, "-m", "mlsmoke", *args], cwd=root, env=env)
