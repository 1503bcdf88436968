"""The warm worker, in the project's interpreter: import once, fork per job.

Started by the first hook that needs it (``client.py``) as
``python -c <bootstrap> ... mlsmoke.warm.server SOCKET ROOT IDLE READY_FD PRELOAD``.
It imports torch and the project's third-party dependencies, checks that forking is
safe (one thread, CUDA not initialised, no project module imported), says so on
READY_FD, and serves jobs on SOCKET until it has been idle for IDLE seconds, its
imports went stale (``freshness.py``), its socket was taken away, or it is stopped
(SIGTERM, ``mlsmoke worker stop``). A job's process group is killed when the job ends
and when its hook goes away before that.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.process_group import TOKEN_VARIABLE, kill_descendants
from mlsmoke.warm import freshness
from mlsmoke.warm.protocol import Connection

HEALTH_CHECK_SECONDS = 2.0
_PR_SET_CHILD_SUBREAPER = 36
REQUEST_SECONDS = 5.0  # for a connected hook to say what it wants


@dataclass
class _Job:
    connection: Connection
    token: str
    hook_gone: bool = False


@dataclass
class _Worker:
    socket_path: Path
    root: Path
    idle: float
    state: dict[str, Any]
    snapshot: dict[str, Any]
    listener: socket.socket
    socket_stamp: Any
    jobs: dict[int, _Job] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.monotonic)
    jobs_run: int = 0
    retiring: str = ""


_stop_requested = threading.Event()


def main(argv: Sequence[str]) -> int:
    socket_path, root, idle, ready_fd, preload = argv[:5]
    ready = os.fdopen(int(ready_fd), "w")
    state = {"sys_path": list(sys.path), "worker_pid": os.getpid()}
    refused = _preload(json.loads(preload), state) or _unsafe(Path(root))
    if refused:
        _say(ready, {"refused": refused})
        return 0
    state["threads"] = native_threads()
    taken = freshness.snapshot(
        [
            *freshness.loaded_files(),
            *freshness.import_directories(Path(root)),
            sys.executable,
        ]
    )
    listener = _listen(Path(socket_path))
    worker = _Worker(
        Path(socket_path),
        Path(root),
        float(idle),
        state,
        taken,
        listener,
        freshness.stamp(socket_path),
    )
    _say(ready, {"ready": os.getpid()})
    return _serve(worker)


def _preload(names: list[str], state: dict[str, Any]) -> str:
    """Import torch and the dependencies; why not, when torch cannot be imported."""
    try:
        import torch
    except Exception as error:  # the project may not use torch at all
        return f"torch does not import here: {type(error).__name__}: {error}"
    state["torch_seed"] = torch.initial_seed()
    for module in _import_names(names):
        try:
            importlib.import_module(module)
        except Exception:  # the job will meet the same error, and report it
            pass
    state["preloaded"] = sorted(
        name for name in sys.modules if "." not in name and not name.startswith("_")
    )
    return ""


def _import_names(distributions: list[str]) -> list[str]:
    """The top-level modules of ``distributions`` (torch's own name is its module)."""
    import importlib.metadata

    def normal(name: str) -> str:
        return name.lower().replace("-", "_").replace(".", "_")

    wanted = {normal(name) for name in distributions}
    modules = []
    for module, owners in importlib.metadata.packages_distributions().items():
        if module.startswith("_") or not any(normal(o) in wanted for o in owners):
            continue
        modules.append(module)
    return sorted(modules)


def _unsafe(root: Path) -> str:
    """Why forking this process would not give a job a clean process; '' if it would.

    A Python thread could hold a lock at the fork, so none may run. Native thread
    pools started at import (OpenBLAS's) register fork handlers, as DataLoader's forked
    workers rely on; a pool that grows after startup retires the worker instead."""
    if threading.active_count() > 1:
        return "importing the dependencies started a Python thread"
    torch = sys.modules["torch"]
    if torch.cuda.is_initialized():
        return "importing the dependencies initialised CUDA"
    project = [
        name
        for name in freshness.project_modules_loaded(root)
        if name.split(".")[0] != "mlsmoke"
    ]
    if project:
        return f"importing the dependencies imported the project's {project[0]}"
    return ""


def native_threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _listen(path: Path) -> socket.socket:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    return listener


def _say(stream: Any, message: dict[str, Any]) -> None:
    try:
        stream.write(json.dumps(message) + "\n")
        stream.close()
    except OSError:  # the hook that started this worker is gone
        pass


def _serve(worker: _Worker) -> int:
    _adopt_orphans()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda *_: _stop_requested.set())
    next_check = time.monotonic() + HEALTH_CHECK_SECONDS
    while not _stop_requested.is_set():
        if not worker.jobs and (worker.retiring or _idle_for(worker) > worker.idle):
            break
        if time.monotonic() >= next_check:
            next_check = time.monotonic() + HEALTH_CHECK_SECONDS
            _check_health(worker)
            continue
        readable = _wait(worker, wake_read, next_check)
        if wake_read in readable:
            _drain(wake_read)
        if worker.listener in readable:
            _accept(worker)
        for pid, job in list(worker.jobs.items()):
            if job.connection.sock in readable:
                _from_hook(pid, job)
        _reap(worker)
    _shut_down(worker)
    return 0


def _idle_for(worker: _Worker) -> float:
    return time.monotonic() - worker.last_active


def _wait(worker: _Worker, wake_read: int, next_check: float) -> list[Any]:
    watched: list[Any] = [wake_read, *(j.connection.sock for j in worker.jobs.values())]
    if not worker.retiring:
        watched.append(worker.listener)
    timeout = max(0.0, next_check - time.monotonic())
    if not worker.jobs:
        timeout = min(timeout, max(0.0, worker.idle - _idle_for(worker)))
    try:
        return select.select(watched, [], [], timeout)[0]
    except InterruptedError:
        return []


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _check_health(worker: _Worker) -> None:
    """Retire when the socket is no longer this worker's or an import went stale."""
    if worker.retiring:
        return
    if freshness.stamp(str(worker.socket_path)) != worker.socket_stamp:
        _retire(worker, "its socket was removed or replaced")
        return
    changed = freshness.first_change(worker.snapshot)
    if changed:
        _retire(worker, f"{changed} changed")


def _retire(worker: _Worker, reason: str) -> None:
    worker.retiring = reason
    if freshness.stamp(str(worker.socket_path)) == worker.socket_stamp:
        try:
            worker.socket_path.unlink()
        except OSError:
            pass
    worker.listener.close()


def _accept(worker: _Worker) -> None:
    try:
        sock, _ = worker.listener.accept()
    except OSError:
        return
    sock.settimeout(REQUEST_SECONDS)
    connection = Connection(sock)
    request = connection.receive()
    fds = connection.take_fds()
    try:
        if request is None:
            connection.close()
        elif request.get("op") == "job":
            _start_job(worker, connection, request, fds)
        else:
            connection.send(_answer(worker, request))
            connection.close()
    except OSError:
        connection.close()
    finally:
        for fd in fds:
            os.close(fd)


def _answer(worker: _Worker, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("op") == "stop":
        _stop_requested.set()
        return {"stopping": os.getpid()}
    return {
        "pid": os.getpid(),
        "root": str(worker.root),
        "python": sys.executable,
        "started": worker.started,
        "jobs_run": worker.jobs_run,
        "running": len(worker.jobs),
        "idle_for": 0.0 if worker.jobs else _idle_for(worker),
        "idle_limit": worker.idle,
        "retiring": worker.retiring,
    }


def _start_job(
    worker: _Worker, connection: Connection, job: dict[str, Any], fds: list[int]
) -> None:
    changed = freshness.first_change(worker.snapshot)
    if changed:
        _retire(worker, f"{changed} changed")
    elif native_threads() > worker.state["threads"] or threading.active_count() > 1:
        _retire(worker, "a thread started in the worker")
    if worker.retiring:
        connection.send({"retired": worker.retiring})
        connection.close()
        return
    if len(fds) != len(job.get("fds", ())):
        connection.send({"retired": "the job's file descriptors did not arrive"})
        connection.close()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        from mlsmoke.warm.child import run_job

        for sock in [
            worker.listener,
            *(j.connection.sock for j in worker.jobs.values()),
        ]:
            sock.detach()
        connection.sock.detach()
        run_job(job, fds, worker.state)
    connection.sock.settimeout(None)
    connection.send({"pid": pid, "worker": os.getpid()})
    worker.jobs[pid] = _Job(connection, str(job["env"].get(TOKEN_VARIABLE, "")))
    worker.jobs_run += 1


def _from_hook(pid: int, job: _Job) -> None:
    """Signals the hook forwards; its end (the hook died) kills the job."""
    if not job.connection.fill():
        job.hook_gone = True
        _signal_group(pid, signal.SIGKILL)
        return
    while (message := job.connection.pop()) is not None:
        signum = message.get("signal")
        if isinstance(signum, int):
            _signal_group(pid, signum)


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except OSError:
        pass


def _adopt_orphans() -> None:
    """Make this worker the parent of its jobs' orphans (a daemon forked twice, in a
    session of its own, without exec: no run token in its environment shows it), so
    that they are killed when a job ends, as they would be in a process of its own."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _kill_adopted(worker: _Worker) -> None:
    """SIGKILL the children of this worker that are not jobs: adopted orphans."""
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in worker.jobs:
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                parent = stat.read().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        if parent == me:
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def _reap_adopted(worker: _Worker) -> None:
    while True:
        try:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if ended is None or ended.si_pid in worker.jobs:
            return
        try:
            os.waitpid(ended.si_pid, 0)
        except ChildProcessError:
            return


def _reap(worker: _Worker) -> None:
    """Each ended job: its group and descendants killed, then reaped, its hook told."""
    _reap_adopted(worker)
    for pid, job in list(worker.jobs.items()):
        try:
            ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            ended = None
        if ended is None and not job.hook_gone:
            continue
        if ended is None:
            continue  # killed, exiting: reaped at the next SIGCHLD
        _signal_group(pid, signal.SIGKILL)
        if job.token:
            kill_descendants(job.token)
        _kill_adopted(worker)
        _, status, usage = os.wait4(pid, 0)
        del worker.jobs[pid]
        worker.last_active = time.monotonic()
        message = {"exit": os.waitstatus_to_exitcode(status)}
        message["peak"] = usage.ru_maxrss * 1024
        try:
            job.connection.send(message)
        except OSError:
            pass
        job.connection.close()


def _shut_down(worker: _Worker) -> None:
    for pid in worker.jobs:
        _signal_group(pid, signal.SIGKILL)
    _kill_adopted(worker)
    for pid, job in list(worker.jobs.items()):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        if job.token:
            kill_descendants(job.token)
        job.connection.close()
    if not worker.retiring:
        _retire(worker, "stopped")
