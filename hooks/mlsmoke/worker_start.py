"""``mlsmoke worker start``: start the project's worker, and return at once.

As the ``warm-worker`` hook, first in a commit's hooks, it lets the worker import torch
while black, flake8 and the other hooks run, so that the doctest and overfit-batch hooks
find it warm. The hook returns at once: a detached process finds the interpreter the
gate would use and starts the worker there, holding the worker's start lock, so a hook
that needs the worker meanwhile waits for it rather than starting another. Under
pre-commit, that process then runs the torchfix, overfit-batch and data-expectations
hooks ahead (``ahead/``), those that the config lists and ``SKIP`` does not, unless
``--no-ahead``: each hook takes its result when it is its own.
Whatever goes wrong is silent and exit 0: the hooks then start the worker, or their own
processes, as they would have anyway. With the worker off (``MLSMOKE_WORKER=0``, the
config, a platform without a safe fork) it does nothing.

The worker (``warm/``) knows none of its callers: this hook tells it what their jobs
import on first use (``job_imports.py``), for it to import while idle.
"""

from __future__ import annotations

import os
from pathlib import Path

from mlsmoke.ahead import jobs
from mlsmoke.job_imports import COMMIT_HOOKS
from mlsmoke.warm.settings import worker_settings


def start_in_background(root: Path, ahead: bool = True) -> int:
    settings = worker_settings(root, os.environ)
    if not settings.enabled:
        return 0
    held = jobs.hold_all(root) if ahead else []
    try:
        if os.fork() != 0:
            return 0
    except OSError:  # no process to spare: the later hooks start the worker
        return 0
    code = 1
    try:
        _detach(keep=[lock for _, lock, _ in held])
        code = 0 if _start(root, settings.idle) else 1
        if code == 0:
            jobs.run_all(root, held)
    finally:
        os._exit(code)


def _detach(keep: list[int]) -> None:
    """A session of its own, and no descriptor of the hook's but ``keep``: pre-commit
    waits for its output pipes to close, and must not wait for this process."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def _start(root: Path, idle: float) -> bool:
    # Imported in the detached process: the hook returns without paying for them.
    from mlsmoke.warm.client import ensure_worker

    python = project_python(root)
    return python is not None and ensure_worker(root, python, idle, COMMIT_HOOKS)


def project_python(root: Path) -> Path | None:
    """The interpreter the gate would use, whose worker this hook starts; None when
    none imports torch (the hooks will say so). None is started to find it when its
    worker listens already: at every commit but the first of a session, the runs
    ahead start 0.1 s sooner."""
    from mlsmoke.interpreter import configured_python, project_candidates
    from mlsmoke.project_process import torch_interpreter

    try:
        candidates = project_candidates(root, configured_python(root, "overfit", None))
        return torch_interpreter(root, candidates).path
    except Exception:
        return None
