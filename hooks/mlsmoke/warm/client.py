"""The hook's side of the warm worker: reach it (starting it first if need be), hand it
a job, and follow the job through a handle with the face of
:class:`~mlsmoke.process_group.ProcessGroup`.

Whatever goes wrong before the job has started (no private directory for the socket,
a worker that cannot start or refuses to, a retired one twice) makes :func:`start_job`
return None, and the hook starts its own process as it would without a worker. A
worker that ends while a job runs raises :class:`WorkerLost` from the handle; the hook
then runs the job again in a process of its own.

The caller names what its jobs import on first use (``first_use``, module names): the
worker imports them while idle, and knows nothing of its callers otherwise. A job that
would rather run at once than wait for the worker (``wait=False``) is handed to it only
when it listens already, no hook is starting it, and it is not importing; otherwise
:func:`start_job` returns None at once.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from mlsmoke.config import read_pyproject
from mlsmoke.process_group import TOKEN_VARIABLE, kill_descendants
from mlsmoke.warm.identity import (
    WorkerIdentity,
    mlsmoke_code,
    runtime_directory,
    socket_path,
    worker_identity,
)
from mlsmoke.warm.launch import listens, refused_lately, start_worker
from mlsmoke.warm.protocol import Connection


class WorkerLost(Exception):
    """The worker ended while it ran a job: the job's result is unknown."""


class WarmJob:
    """A job forked by the worker: a process group of its own, led by ``pid``."""

    def __init__(self, connection: Connection, pid: int, worker: int, token: str):
        self.connection, self.pid, self.worker, self.token = (
            connection,
            pid,
            worker,
            token,
        )
        self.returncode: int | None = None
        self.peak = 0
        self.lost = False
        self._sending = threading.Lock()

    def signal(self, signum: int) -> None:
        """Send ``signum`` to every process of the job's group (through the worker,
        which alone knows whether the job's pid is still the job's)."""
        with self._sending:
            try:
                self.connection.send({"signal": int(signum)})
            except OSError:
                pass

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def wait_exited(self, timeout: float | None = None) -> bool:
        """Whether the job ended within ``timeout`` seconds (None: wait for it).
        Raises WorkerLost when the worker ends first."""
        if self.returncode is not None or self.lost:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self.connection.pop()
            if message is not None and "exit" in message:
                self.returncode = int(message["exit"])
                self.peak = int(message.get("peak", 0))
                self.connection.close()
                return True
            if message is not None:
                continue
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            if select.select([self.connection.sock], [], [], left)[0]:
                if not self.connection.fill():
                    self.lost = True
                    raise WorkerLost(
                        f"the warm worker (pid {self.worker}) ended while it ran"
                        f" the job (pid {self.pid})"
                    )

    def end(self) -> tuple[int, int]:
        """The job's exit code and peak resident memory in bytes, once it ended;
        what it left behind is killed."""
        try:
            self.wait_exited()
        except WorkerLost:
            pass
        if self.lost:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
        kill_descendants(self.token)
        self.connection.close()
        return (self.returncode if self.returncode is not None else -9), self.peak


def start_job(
    root: Path,
    python: Path,
    idle: float,
    module: str,
    args: Sequence[str],
    stdout: int,
    extra_fd: int,
    first_use: Sequence[str] = (),
    wait: bool = True,
) -> WarmJob | None:
    """The job running in the worker for ``root`` and ``python``; None when there
    is no worker to run it (the hook then starts its own process). ``wait=False``:
    only a worker that takes the job at once, never one started or waited for."""
    usable = _usable(root, python)
    if usable is None:
        return None
    directory, identity = usable
    token = uuid.uuid4().hex
    request = {
        "op": "job",
        "module": module,
        "args": list(args),
        "cwd": str(root),
        "env": {**os.environ, TOKEN_VARIABLE: token},
        "code": identity.code,
        "fds": [0, 1, 2, extra_fd],
        "first_use": list(first_use),
        "wait": wait,
    }
    with (
        open(os.devnull, "rb") as devnull,
        _locked(directory, identity.key, wait) as held,
    ):
        if not held:
            return None  # a hook is starting the worker: it would be a wait
        fds = [devnull.fileno(), stdout, stdout, extra_fd]
        for _ in range(2 if wait else 1):  # a retired worker: start another once
            connection = _connect(directory, identity, idle, first_use, start=wait)
            if connection is None:
                return None
            try:
                connection.send(request, fds)
                answer = connection.receive()
            except OSError:
                answer = None
            if answer is not None and "pid" in answer:
                worker = int(answer.get("worker", 0))
                return WarmJob(connection, int(answer["pid"]), worker, token)
            connection.close()
            if answer is None or "retired" not in answer:
                return None
    return None


def ensure_worker(
    root: Path, python: Path, idle: float, first_use: Sequence[str] = ()
) -> bool:
    """Start the worker for ``root`` and ``python`` unless one listens already;
    whether one listens now."""
    usable = _usable(root, python)
    if usable is None:
        return False
    directory, identity = usable
    with _locked(directory, identity.key):
        connection = _connect(directory, identity, idle, first_use)
    if connection is None:
        return False
    connection.close()
    return True


def worker_listens(root: Path, python: Path) -> bool:
    """Whether the worker for ``root`` and ``python`` listens now (none is started):
    then ``python`` imports torch, or that worker would have refused."""
    usable = _usable(root, python)
    if usable is None:
        return False
    directory, identity = usable
    return listens(socket_path(directory, identity.key))


def _usable(root: Path, python: Path) -> tuple[Path, WorkerIdentity] | None:
    """The workers' directory and the identity of the worker for ``root`` and
    ``python``; None without a private directory, or when that worker refused lately."""
    directory = runtime_directory(os.environ)
    if directory is None:
        return None
    identity = worker_identity(
        root, python, _dependencies(root), os.environ, mlsmoke_code(directory)
    )
    if refused_lately(directory, identity.key):
        return None
    return directory, identity


def _dependencies(root: Path) -> list[str]:
    return _as_list(read_pyproject(root).get("project", {}).get("dependencies", []))


def _as_list(value: Any) -> list[str]:
    return (
        [item for item in value if isinstance(item, str)]
        if isinstance(value, list)
        else []
    )


@contextmanager
def _locked(directory: Path, key: str, wait: bool = True) -> Iterator[bool]:
    """One hook at a time starts the worker of ``key``; whether the lock is held
    (``wait=False``: False at once when another hook holds it)."""
    with open(directory / f"{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def _connect(
    directory: Path,
    identity: WorkerIdentity,
    idle: float,
    first_use: Sequence[str] = (),
    start: bool = True,
) -> Connection | None:
    path = socket_path(directory, identity.key)
    for attempt in range(2 if start else 1):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            return Connection(sock)
        except OSError:
            sock.close()
        if attempt == 0 and start:
            if not start_worker(directory, identity, idle, first_use):
                return None
    return None
