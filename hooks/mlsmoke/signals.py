"""What the CLI does when it is stopped from outside, or its reader goes away.

SIGTERM and SIGHUP become :class:`~mlsmoke.errors.Terminated`, raised in the main
thread, so that the code unwinding from it stops the child processes and removes the
temporary files, as it does for Ctrl-C's KeyboardInterrupt.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from mlsmoke.errors import EXIT_BROKEN_PIPE, Terminated

STOPPING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextmanager
def terminated_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise Terminated in the main thread."""
    previous = {}
    for signum in STOPPING_SIGNALS:
        if signal.getsignal(signum) == signal.SIG_IGN:  # nohup: keep ignoring
            continue
        previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stdout_closed() -> int:
    """The reader of stdout is gone (``mlsmoke ... | head -1``): drop what is left
    unwritten, quietly, and exit as a process killed by SIGPIPE would."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
