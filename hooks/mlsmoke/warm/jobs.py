"""The worker's forked jobs: the signals their hooks forward, and their end.

A job ends as a process of its own would: its process group is killed, then every
process carrying its run token, then the orphans the worker adopted (the worker is a
child subreaper, so a daemon forked twice without ``exec``, which no token shows, is
found too); then it is reaped and its hook told the exit code and peak memory.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from mlsmoke.process_group import kill_descendants
from mlsmoke.warm.protocol import Connection

_PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Job:
    """A running job: the connection of the hook waiting for it, and its run token."""

    connection: Connection
    token: str


def from_hook(pid: int, job: Job) -> None:
    """Signals the hook forwards; its end (the hook died) kills the job."""
    if not job.connection.fill():
        signal_group(pid, signal.SIGKILL)
        return
    while (message := job.connection.pop()) is not None:
        signum = message.get("signal")
        if isinstance(signum, int):
            signal_group(pid, signum)


def signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except OSError:
        pass


def adopt_orphans() -> None:
    """Make this worker the parent of its jobs' orphans (a daemon forked twice, in a
    session of its own, without exec: no run token in its environment shows it), so
    that they are killed when a job ends, as they would be in a process of its own."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)


def kill_adopted(jobs: dict[int, Job]) -> None:
    """SIGKILL the children of this worker that are not jobs: adopted orphans."""
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in jobs:
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


def _reap_adopted(jobs: dict[int, Job]) -> None:
    while True:
        try:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if ended is None or ended.si_pid in jobs:
            return
        try:
            os.waitpid(ended.si_pid, 0)
        except ChildProcessError:
            return


def reap(jobs: dict[int, Job]) -> bool:
    """Each ended job: its group and descendants killed, then reaped, its hook told.
    Whether any job ended."""
    _reap_adopted(jobs)
    ended_any = False
    for pid, job in list(jobs.items()):
        try:
            ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            ended = None
        if ended is None:
            continue
        signal_group(pid, signal.SIGKILL)
        if job.token:
            kill_descendants(job.token)
        kill_adopted(jobs)
        _, status, usage = os.wait4(pid, 0)
        del jobs[pid]
        ended_any = True
        message = {"exit": os.waitstatus_to_exitcode(status)}
        message["peak"] = usage.ru_maxrss * 1024
        try:
            job.connection.send(message)
        except OSError:
            pass
        job.connection.close()
    return ended_any
