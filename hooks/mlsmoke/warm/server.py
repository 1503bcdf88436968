"""The warm worker, in the project's interpreter: import once, fork per job.

Started by the first hook that needs it (``client.py``) as ``python -c <bootstrap> ...
mlsmoke.warm.server SOCKET ROOT IDLE READY_FD PRELOAD CODE FIRST_USE``. It imports torch
and the project's third-party dependencies, checks that forking is safe (one thread,
CUDA not initialised, no project module imported), says so on READY_FD, and serves jobs
on SOCKET until it has been idle for IDLE seconds, its imports went stale
(``freshness.py``), a job came from other mlsmoke code than CODE
(``identity.mlsmoke_code``), its socket was taken away, or it is stopped (SIGTERM,
``mlsmoke worker stop``). Before any import it takes the key's claim (``claim.py``):
when another worker holds it, it says ``taken`` and ends, so that one project never
imports torch twice, whoever started the worker and whatever became of the starter.
A job's process group is killed when the job ends and when its
hook goes away before that. FIRST_USE, and each job's ``first_use``, name what to import
once idle (``first_use.py``); a job with ``"wait": false`` is refused (``busy``) rather
than kept waiting for those imports.
"""

from __future__ import annotations

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

from mlsmoke.process_group import TOKEN_VARIABLE
from mlsmoke.warm import claim, freshness
from mlsmoke.warm.first_use import START_DELAY, FirstUse
from mlsmoke.process_group import kill_descendants
from mlsmoke.warm.jobs import (
    Job,
    adopt_orphans,
    from_hook,
    kill_adopted,
    reap,
    signal_group,
)
from mlsmoke.warm.preload import native_threads, preload, unsafe
from mlsmoke.warm.protocol import Connection

HEALTH_CHECK_SECONDS = 2.0
REQUEST_SECONDS = 5.0  # for a connected hook to say what it wants


@dataclass
class _Worker:
    socket_path: Path
    root: Path
    idle: float
    state: dict[str, Any]
    snapshot: dict[str, Any]
    listener: socket.socket
    socket_stamp: Any
    jobs: dict[int, Job] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.monotonic)
    jobs_run: int = 0
    retiring: str = ""
    code: str = ""  # the mlsmoke code it runs: a job from other code retires it
    first_use: FirstUse = field(default_factory=FirstUse)
    claim_fd: int | None = None  # released when the worker stops listening


_stop_requested = threading.Event()


def main(argv: Sequence[str]) -> int:
    socket_path, root, idle, ready_fd = argv[:4]
    ready = os.fdopen(int(ready_fd), "w")
    held = claim.take(claim.claim_path(Path(socket_path)))
    if held is None:
        _say(ready, {"taken": "another worker of this project is starting or running"})
        return 0
    state = {"sys_path": list(sys.path), "worker_pid": os.getpid()}
    refused = preload(json.loads(argv[4]), state) or unsafe(Path(root))
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
        code=argv[5] if len(argv) > 5 else "",
        first_use=FirstUse(json.loads(argv[6]) if len(argv) > 6 else ()),
        claim_fd=held,
    )
    _say(ready, {"ready": os.getpid()})
    return _serve(worker)


def _listen(path: Path) -> socket.socket:
    """A listening socket at ``path``, in place of a dead worker's (only the claim's
    holder gets here). Bound and listening under another name first, so that no
    client (``worker status`` removes the sockets it cannot reach) finds it deaf."""
    bound = path.with_name(f"{os.getpid()}.bound")  # no longer than the key's name
    bound.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(bound))
    listener.listen(16)
    os.replace(bound, path)
    return listener


def _say(stream: Any, message: dict[str, Any]) -> None:
    try:
        stream.write(json.dumps(message) + "\n")
        stream.close()
    except OSError:  # the hook that started this worker is gone
        pass


def _serve(worker: _Worker) -> int:
    adopt_orphans()
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
                from_hook(pid, job)
        if reap(worker.jobs):
            worker.last_active = time.monotonic()
        if worker.first_use.pending and not worker.jobs:
            if _idle_for(worker) > START_DELAY:
                worker.first_use.start()
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
    if worker.first_use.pending and not worker.jobs:
        timeout = min(timeout, max(0.0, START_DELAY - _idle_for(worker)) + 0.01)
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
    if not worker.root.is_dir():
        _retire(worker, f"{worker.root} is gone")
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
    claim.release(worker.claim_fd)
    worker.claim_fd = None


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
        "importing": worker.first_use.importing,
    }


def _start_job(
    worker: _Worker, connection: Connection, job: dict[str, Any], fds: list[int]
) -> None:
    worker.first_use.add(job.get("first_use", ()))
    if worker.first_use.importing and not job.get("wait", True):
        connection.send({"busy": "importing what a first use needs"})
        connection.close()
        return
    if worker.first_use.running:
        _finish_first_use(worker)
    changed = freshness.first_change(worker.snapshot)
    if changed:
        _retire(worker, f"{changed} changed")
    elif native_threads() > worker.state["threads"] or threading.active_count() > 1:
        _retire(worker, "a thread started in the worker")
    elif job.get("code", "") != worker.code:
        _retire(worker, f"a job came from other mlsmoke code ({job.get('code')})")
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
    worker.jobs[pid] = Job(connection, str(job["env"].get(TOKEN_VARIABLE, "")))
    worker.jobs_run += 1


def _finish_first_use(worker: _Worker) -> None:
    """Join the first-use imports, which must leave forking as safe as the preload
    did; their files join the snapshot, so that a change to them retires the worker
    as a change to torch's does."""
    if not worker.first_use.finish(worker.state["threads"]):
        _retire(worker, "a thread started in the worker")
        return
    refused = unsafe(worker.root)
    if refused:
        _retire(worker, refused.replace("the dependencies", "what a first use needs"))
        return
    added = [path for path in freshness.loaded_files() if path not in worker.snapshot]
    worker.snapshot.update(freshness.snapshot(added))


def _shut_down(worker: _Worker) -> None:
    if worker.first_use.running:
        worker.first_use.finish(worker.state["threads"])
    for pid in worker.jobs:
        signal_group(pid, signal.SIGKILL)
    kill_adopted(worker.jobs)
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
