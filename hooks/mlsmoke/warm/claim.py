"""A worker's claim on its key: a lock the worker process itself holds, from before
its imports until it stops listening.

The hooks' start lock (``client.py``) is held by the process that starts a worker, and
goes with it: a starter killed while its worker imported torch let the next start
begin a second worker. The claim is taken first thing in the worker, so a second
worker for the key gives up at once (``taken``) and its starter waits for the first.
It is a POSIX record lock: the kernel drops it when the worker dies, and the jobs the
worker forks do not inherit it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def claim_path(socket: Path) -> Path:
    return socket.with_suffix(".claim")


def take(path: Path) -> int | None:
    """The descriptor holding the claim at ``path``; None when a worker holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def held(path: Path) -> bool:
    """Whether a worker holds the claim at ``path`` now."""
    try:
        fd = take(path)
    except OSError:
        return False
    release(fd)
    return fd is None
