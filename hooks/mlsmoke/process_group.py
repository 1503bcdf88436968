"""Run the project's interpreter in a process group of its own, and leave nothing it
started behind.

The project's code may start processes: a data server, a tensorboard, a ``fork()``, a
daemon. The worker (or the doctest runner) leads a new session, so those stay in its
process group, which is killed as a whole when the leader ends, is killed at its
timeout, or the hook is stopped. A daemon leaves the group (``setsid``), but not its
environment: every descendant inherits a token naming this run, and on Linux the
processes carrying it are found in /proc and killed too.

The group is killed before its leader is reaped: until then the leader's pid, which is
the group's id, cannot be given to another process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Sequence
from typing import Any

TOKEN_VARIABLE = "MLSMOKE_RUN"
_POLL_SECONDS = 0.01
_SWEEPS = 3  # a daemon may fork while the first sweep kills it


class ProcessGroup:
    """A child process leading its own session, and everything started under it."""

    def __init__(self, command: Sequence[str], **options: Any) -> None:
        """``subprocess.Popen(command, **options)`` in a new session; raises OSError
        as Popen does."""
        self.token = uuid.uuid4().hex
        environment = {**os.environ, TOKEN_VARIABLE: self.token}
        self.process = subprocess.Popen(
            command, env=environment, start_new_session=True, **options
        )
        self.pid = self.process.pid

    def signal(self, signum: int) -> None:
        """Send ``signum`` to every process of the group."""
        try:
            os.killpg(self.pid, signum)
        except OSError:  # the group is gone already
            pass

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def wait_exited(self, timeout: float | None = None) -> bool:
        """Whether the leader exited within ``timeout`` seconds (None: wait for it);
        it is not reaped, so that its group can still be killed safely."""
        if not hasattr(os, "waitid"):  # macOS before Python 3.13: reap it
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        flags = os.WEXITED | os.WNOWAIT
        if timeout is None:
            return self._waitid(flags)
        deadline = time.monotonic() + timeout
        while not self._waitid(flags | os.WNOHANG):
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_SECONDS)
        return True

    def end(self) -> tuple[int, int]:
        """Once the leader has exited: kill what is left of the group and of the
        run's descendants, then reap the leader. Its exit code and its peak resident
        memory in bytes (0 when unknown)."""
        self.wait_exited()
        self.kill()
        kill_descendants(self.token)
        if self.process.returncode is not None:
            return self.process.returncode, 0
        try:
            _, status, usage = os.wait4(self.pid, 0)
        except ChildProcessError:  # reaped elsewhere: no figure
            return self.process.wait(), 0
        self.process.returncode = os.waitstatus_to_exitcode(status)
        return self.process.returncode, usage.ru_maxrss * 1024  # kilobytes on Linux

    def _waitid(self, flags: int) -> bool:
        try:
            return os.waitid(os.P_PID, self.pid, flags) is not None
        except ChildProcessError:  # reaped already
            return True


def kill_descendants(token: str) -> None:
    """SIGKILL every process whose environment carries ``token`` (Linux only)."""
    for _ in range(_SWEEPS):
        found = carrying(token)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def carrying(token: str) -> list[int]:
    """The processes whose environment holds ``TOKEN_VARIABLE=token``; readable only
    for this user's processes, which is where they are."""
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")
        except OSError:  # gone, or not ours
            continue
        if needle in variables:
            found.append(int(name))
    return found
