"""The hooks that run ahead, in the order their hooks come in a commit, and the two
steps of the warm-worker hook: hold their locks before it returns, run them after.

A hook runs ahead when this is a pre-commit run, ``SKIP`` does not name it and the
run's config lists it. Each job module has the same face: ``HOOK_ID``; ``plan(root,
invocation)``, the arguments its hook will be given (None: unknown, nothing runs
ahead); ``keys(root, argv)``, every input it reads; ``job(root, argv)``, its
:class:`~mlsmoke.ahead.runs.Outcome`.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from mlsmoke.ahead import expect, overfit, runs, torchfix
from mlsmoke.ahead.invocation import Invocation, invocation, lists_hook

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
    """Each held job, one after another; a job with no plan releases its lock with
    no result, and its hook runs as it would have."""
    for job, lock, run in held:
        argv = job.plan(root, run)
        if argv is None:
            runs.release(lock)
            continue
        runs.run(
            root,
            job.HOOK_ID,
            lock,
            argv,
            lambda: job.job(root, argv),
            lambda: job.keys(root, argv),
        )
