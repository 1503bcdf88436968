"""The hooks that run ahead, in the order their hooks come in a commit, and the two
steps of the warm-worker hook: hold their locks before it returns, run them after.

A hook runs ahead when this is a pre-commit run, ``SKIP`` does not name it and the
run's config lists it. Each job module has the same face: ``HOOK_ID``; ``plan(root,
invocation)``, the arguments its hook will be given (None: unknown, nothing runs
ahead); ``keys(root, argv)``, every input it reads; ``job(root, argv)``, its
:class:`~mlsmoke.ahead.runs.Outcome`.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from mlsmoke.ahead import expect, overfit, runs, torchfix
from mlsmoke.ahead.invocation import Invocation, invocation, lists_hook

# Two lanes, each a process running its jobs in turn: the gate, the longest, alone;
# torchfix, asked for first and done soonest, then data-expectations. All three at
# once slowed the gate by 1 s on a loaded machine; all in one queue made the last
# wait (docs/worker.md).
LANES: tuple[tuple[ModuleType, ...], ...] = ((torchfix, expect), (overfit,))
JOBS: tuple[ModuleType, ...] = (torchfix, overfit, expect)


class Held(NamedTuple):
    job: ModuleType
    lock: int
    run: Invocation  # read in the hook: the process left behind has another parent


def hold_all(root: Path) -> list[Held]:
    """The locks of the hooks this run will want run ahead, held."""
    run = invocation() if runs.pre_commit_run() else None
    if run is None:
        return []
    held = []
    for job in JOBS:
        if runs.skipped(job.HOOK_ID) or not lists_hook(Path(run.config), job.HOOK_ID):
            continue
        lock = runs.hold(root, job.HOOK_ID)
        if lock is not None:
            held.append(Held(job, lock, run))
    return held


def run_all(root: Path, held: list[Held]) -> None:
    """The held jobs, each lane in a process of its own, and wait for them. A job
    with no plan releases its lock with no result: its hook runs as it would have."""
    children = []
    for lane in LANES:
        jobs = [one for one in held if one.job in lane]
        if not jobs:
            continue
        try:
            child = os.fork()
        except OSError:  # no process to spare: this one runs them
            _run_lane(root, jobs)
            continue
        if child == 0:
            try:
                _run_lane(root, jobs)
            finally:
                os._exit(0)
        for one in jobs:
            os.close(one.lock)  # the child holds it until its result is written
        children.append(child)
    for child in children:
        os.waitpid(child, 0)


def _run_lane(root: Path, jobs: list[Held]) -> None:
    for job, lock, run in sorted(jobs, key=lambda one: JOBS.index(one.job)):
        _run_one(root, job, lock, run)


def _run_one(root: Path, job: ModuleType, lock: int, run: Invocation) -> None:
    argv = job.plan(root, run)
    if argv is None:
        runs.release(lock)
        return
    runs.run(
        root,
        job.HOOK_ID,
        lock,
        argv,
        lambda: job.job(root, argv),
        lambda: job.keys(root, argv),
    )
