"""What a job would otherwise import on first use, imported by the worker in a thread
once it has been idle a moment, and joined before the next fork.

The worker knows none of these by itself: its callers name them. The hook that starts
the worker names its own (``client.start_worker``'s ``first_use``), and every job names
its own too, so a worker started for one kind of job learns what the others import
before their next job. The gate names ``torch._dynamo``, which every torch.optim
optimizer imports on its first ``add_param_group`` (torch's lazy ``_disable_dynamo``)
at about the cost of torch's own import, and its own modules; the doctest hook names
its runner. The worker says it is ready before these imports: a job already waiting
is forked at once and imports what it needs itself; a job that arrives during the
imports waits for the module being imported, not for the rest (those resume the next
time the worker is idle), unless it said it would rather not wait at all. So a commit
right after the one that started the worker does not wait for every first use. A
thread, so that the worker still answers the hooks (signals, exits) meanwhile.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Iterable

from mlsmoke.warm.preload import native_threads

START_DELAY = 0.1  # seconds with no job running before the imports begin
THREAD_EXIT_LIMIT = 0.5  # seconds for the joined thread to leave /proc/self/task


class FirstUse:
    """The imports the callers asked for: some waiting, some running, some done."""

    def __init__(self, modules: Iterable[str] = ()) -> None:
        self.wanted: list[str] = []
        self.imported: set[str] = set()
        self._thread: threading.Thread | None = None
        self._importing: list[str] = []
        self._done: list[str] = []  # by the thread: imported, or failed to import
        self._stop = threading.Event()
        self.add(modules)

    def add(self, modules: Iterable[str]) -> None:
        """Ask for ``modules`` too; those asked for before are not asked again."""
        for name in modules:
            if isinstance(name, str) and name not in self.wanted:
                self.wanted.append(name)

    @property
    def pending(self) -> bool:
        return self._thread is None and bool(self._waiting())

    @property
    def running(self) -> bool:
        """Started and not yet joined (it may have finished)."""
        return self._thread is not None

    @property
    def importing(self) -> bool:
        """Still importing: a fork now would wait for it."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if not self.pending:
            return
        self._importing = self._waiting()
        self._done, self._stop = [], threading.Event()
        self._thread = threading.Thread(
            target=_import_all,
            args=(self._importing, self._done, self._stop),
            name="mlsmoke-first-use",
        )
        self._thread.daemon = True
        self._thread.start()

    def finish(self, native_threads_before: int) -> bool:
        """Stop the imports after the module being imported (the others stay
        pending) and wait for it; whether the process is again down to its threads of
        before, so that forking it is safe. Not started: nothing to wait for."""
        if self._thread is None:
            return True
        self._stop.set()
        self._thread.join()
        self._thread = None
        self.imported.update(self._done)
        self._importing = []
        deadline = time.monotonic() + THREAD_EXIT_LIMIT
        while native_threads() > native_threads_before:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)
        return threading.active_count() == 1

    def _waiting(self) -> list[str]:
        return [name for name in self.wanted if name not in self.imported]


def _import_all(modules: list[str], done: list[str], stop: threading.Event) -> None:
    for name in modules:
        if stop.is_set():
            return
        try:
            importlib.import_module(name)
        except Exception:  # the job that needs it meets the same error, and reports it
            pass
        done.append(name)
