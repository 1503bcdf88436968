"""Start the project's interpreter on one of mlsmoke's entry modules: forked by the
warm worker when there is one to use (``warm/``), otherwise a process of its own.

Both answer to the same calls (``signal``, ``kill``, ``wait_exited``, ``end``), so
the gate and the doctest hook supervise them alike.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import TypeVar, Union

from mlsmoke.interpreter import Candidate, Interpreter, first_that_imports
from mlsmoke.process_group import ProcessGroup
from mlsmoke.project_command import module_command
from mlsmoke.warm.client import WarmJob, WorkerLost, start_job, worker_listens
from mlsmoke.warm.settings import worker_settings

ProjectProcess = Union[ProcessGroup, WarmJob]
T = TypeVar("T")


class WorkerUse(Enum):
    """How a job may use the warm worker."""

    WAIT = "wait"  # the worker, started and waited for if need be: the job needs torch
    NONE = "none"  # a process of its own, at once


def start_project_process(
    root: Path,
    python: Path,
    module: str,
    args: Sequence[str],
    stdout: int,
    extra_fd: int,
    warm: WorkerUse = WorkerUse.WAIT,
    first_use: Sequence[str] = (),
) -> ProjectProcess:
    """``<module>.main(args)`` in ``python``, in ``root``; stdin empty, stdout and
    stderr to ``stdout``, and ``extra_fd`` open at its number. Raises OSError as
    Popen does. The entry module is told ``extra_fd``'s number as its last argument.
    ``first_use``: the modules such jobs import, for the worker to import ahead."""
    args = [*args, str(extra_fd)]
    if warm is not WorkerUse.NONE:
        settings = worker_settings(root, os.environ)
        if settings.enabled:
            job = start_job(
                root, python, settings.idle, module, args, stdout, extra_fd, first_use
            )
            if job is not None:
                return job
    return ProcessGroup(
        module_command(python, module, *args),
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        pass_fds=(extra_fd,),
    )


def torch_interpreter(root: Path, candidates: Sequence[Candidate]) -> Interpreter:
    """The interpreter :func:`first_that_imports` would choose for torch. None is
    started when the first candidate's worker listens: it imported torch there (or
    would have refused), so that candidate is the first that imports torch. With
    the worker off, nothing of the worker's is looked at (nor its directory made)."""
    enabled = bool(candidates) and worker_settings(root, os.environ).enabled
    if enabled and worker_listens(root, candidates[0].path):
        return Interpreter(candidates[0].path, candidates[0].origin, {})
    return first_that_imports(candidates, ["torch"])


def warm_then_cold(run: Callable[[WorkerUse], T], use: WorkerUse = WorkerUse.WAIT) -> T:
    """``run(use)``; if the worker ended during it, say so and ``run(NONE)``: a job
    whose worker died is run again, never taken as passed."""
    try:
        return run(use)
    except WorkerLost as lost:
        print(
            f"mlsmoke: {lost}; running it again in a process of its own",
            file=sys.stderr,
        )
        return run(WorkerUse.NONE)
