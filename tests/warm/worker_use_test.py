"""The doctest hook uses the warm worker only where it pays: a run whose modules need
torch waits for it; any other starts its own process at once, never waiting for a
worker being started, nor forked by a ready one. Real CLI runs and real workers;
which process ran the examples says which path ran."""

from __future__ import annotations

import fcntl
import json
import textwrap
from pathlib import Path

import pytest

from mlsmoke.doctests.worker_use import worker_use
from mlsmoke.project_process import WorkerUse

from .warmkit import SEEN_VARIABLE, WarmProject, ready_worker

FILES = 5

NUMPY_MODULE = textwrap.dedent('''
    """Means of arrays.

    >>> import {name}
    >>> {name}.record()
    >>> {name}.mean([1, 2, 3])
    2.0
    """
    import json
    import os
    import sys

    import numpy


    def mean(values):
        return float(numpy.mean(values))


    def record():
        entry = {{
            "file": __name__,
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "torch": "torch" in sys.modules,
        }}
        with open(os.environ["{seen}"], "a") as file:
            file.write(json.dumps(entry) + "\\n")
    ''')
STDLIB_MODULE = NUMPY_MODULE.replace("\nimport numpy\n", "").replace(
    "float(numpy.mean(values))", "sum(values) / len(values)"
)
assert "numpy" not in STDLIB_MODULE


def _write_modules(project: WarmProject, template: str) -> list[str]:
    names = [f"stats{i}" for i in range(FILES)]
    for name in names:
        text = template.format(name=name, seen=SEEN_VARIABLE)
        (project.root / f"{name}.py").write_text(text)
    return [f"{name}.py" for name in names]


def _doctest(project: WarmProject, files: list[str]):
    return project.run("doctest", "--no-cache", *files)


def _seen(project: WarmProject) -> list[dict]:
    return [entry for entry in project.seen() if "file" in entry]


def test_a_numpy_run_starts_no_worker_and_runs_in_a_fresh_process(
    project: WarmProject,
):
    files = _write_modules(project, NUMPY_MODULE)
    outcome = _doctest(project, files)
    assert outcome.code == 0, outcome.output
    seen = _seen(project)
    assert len(seen) == FILES
    assert {entry["torch"] for entry in seen} == {False}  # not forked from a worker
    assert len({entry["pid"] for entry in seen}) == 1  # one runner for the five
    assert not project.warm_pids()


def test_a_numpy_run_does_not_use_a_ready_worker_either(project: WarmProject):
    files = _write_modules(project, NUMPY_MODULE)
    worker = ready_worker(project)
    outcome = _doctest(project, files)
    assert outcome.code == 0, outcome.output
    seen = _seen(project)
    assert worker not in {entry["ppid"] for entry in seen}
    assert {entry["torch"] for entry in seen} == {False}


def test_a_numpy_run_never_waits_for_a_worker_being_started(project: WarmProject):
    files = _write_modules(project, NUMPY_MODULE)
    ready_worker(project)
    (lock,) = project.workers.glob("*.lock")
    with open(lock, "w") as held:  # as a hook starting the worker holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        outcome = _doctest(project, files)
    assert outcome.code == 0, outcome.output
    seen = _seen(project)
    assert {entry["torch"] for entry in seen} == {False}


def test_a_run_without_third_party_imports_never_uses_the_worker(
    project: WarmProject,
):
    files = _write_modules(project, STDLIB_MODULE)
    ready_worker(project)
    outcome = _doctest(project, files)
    assert outcome.code == 0, outcome.output
    (worker,) = project.warm_pids()
    seen = _seen(project)
    assert len(seen) == FILES
    assert worker not in {entry["ppid"] for entry in seen}
    assert {entry["torch"] for entry in seen} == {False}


def test_a_run_that_needs_torch_waits_for_the_worker(project: WarmProject):
    assert project.doctest().code == 0  # app.py imports torch
    (worker,) = project.warm_pids()
    assert [entry["ppid"] for entry in project.seen()] == [worker]


@pytest.mark.parametrize(
    "needs, use",
    [
        (["numpy", "torch"], WorkerUse.WAIT),
        (["torch"], WorkerUse.WAIT),
        (["numpy"], WorkerUse.NONE),
        (["torchvision_like"], WorkerUse.NONE),
        ([], WorkerUse.NONE),
    ],
)
def test_which_runs_use_the_worker(needs, use):
    assert worker_use(needs) is use


def test_the_seen_file_is_json_lines(project: WarmProject):
    files = _write_modules(project, STDLIB_MODULE)
    assert _doctest(project, files).code == 0
    lines = Path(project.env[SEEN_VARIABLE]).read_text().splitlines()
    assert all(json.loads(line)["file"].startswith("stats") for line in lines)
