"""A deadline that moves: kill a child process when its current task's time is up."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Watchdog(threading.Thread):
    """Calls ``kill`` once the deadline passes, unless ``finish`` comes first.

    ``extend(seconds)`` sets the deadline to ``seconds`` from now: the child says
    when each task (a gate, a file) starts, and each gets its own time.
    """

    def __init__(self, kill: Callable[[], None], seconds: float) -> None:
        super().__init__(daemon=True)
        self._kill = kill
        self._changed = threading.Condition()
        self._deadline = time.monotonic() + seconds
        self._seconds = seconds
        self._finished = False
        self.expired_after: float | None = None  # the allowance that ran out

    def extend(self, seconds: float) -> None:
        with self._changed:
            self._deadline, self._seconds = time.monotonic() + seconds, seconds
            self._changed.notify_all()

    def finish(self) -> None:
        with self._changed:
            self._finished = True
            self._changed.notify_all()

    def run(self) -> None:
        with self._changed:
            while not self._finished:
                left = self._deadline - time.monotonic()
                if left <= 0:
                    self.expired_after = self._seconds
                    break
                self._changed.wait(left)
        if self.expired_after is not None:
            try:
                self._kill()
            except OSError:  # already gone
                pass
