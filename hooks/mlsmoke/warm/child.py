"""A forked job, made to look to the project's code and to the hook like the fresh
``python -c`` process that :func:`mlsmoke.project_command.module_command` starts.

It leads a session of its own (the hook kills its group), dies with the worker, has
the hook's standard streams and progress descriptor at the numbers the hook gave, the
hook's working directory and environment (faulthandler on only when the job's
PYTHONFAULTHANDLER says so), ``sys.argv == ["-c"]``, the worker's original
``sys.path``, default signal handlers, and fresh seeds: ``random`` reseeds itself at
fork, numpy's global generator is reseeded from the system as at its import, and
torch's is set back to the seed it started with. Nothing of the project was imported
before the fork, and the import system's directory caches are dropped, so every project
module is read from disk as it is now.
"""

from __future__ import annotations

import importlib
import linecache
import os
import signal
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

_HIGH_FD = 512  # received descriptors are moved above the targets before dup2
_PR_SET_PDEATHSIG = 1


def run_job(
    job: Mapping[str, Any], received: Sequence[int], state: Mapping[str, Any]
) -> None:
    """Never returns: the job's exit code is this process's."""
    try:
        _detach(state["worker_pid"])
        _descriptors(received, job["fds"])
        _process_state(job, state)
    except BaseException:  # the job never started; the worker reports the code
        os._exit(70)
    code = 1
    try:
        code = importlib.import_module(job["module"]).main(list(job["args"]))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(code if isinstance(code, int) else 1)


def _detach(worker_pid: int) -> None:
    os.setsid()
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != worker_pid:  # the worker died before prctl
        os._exit(137)
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _descriptors(received: Sequence[int], targets: Sequence[int]) -> None:
    """The received descriptors at the hook's numbers; every other one closed."""
    import fcntl

    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, _HIGH_FD + max(targets)) for fd in received]
    for fd, target in zip(moved, targets):
        os.dup2(fd, target, inheritable=True)
    keep = set(targets)
    os.closerange(max(keep) + 1, os.sysconf("SC_OPEN_MAX"))
    for fd in range(max(keep)):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _process_state(job: Mapping[str, Any], state: Mapping[str, Any]) -> None:
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    _fault_handler(job["env"])
    sys.argv[:] = ["-c"]
    sys.path[:] = state["sys_path"]
    importlib.invalidate_caches()
    linecache.clearcache()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(state["torch_seed"])


def _fault_handler(env: Mapping[str, str]) -> None:
    """faulthandler on or off as the job's PYTHONFAULTHANDLER says, as a fresh
    interpreter has it; not as the hook that started the worker had it."""
    import faulthandler

    if env.get("PYTHONFAULTHANDLER"):
        faulthandler.enable(file=sys.stderr, all_threads=True)
    elif faulthandler.is_enabled():
        faulthandler.disable()
