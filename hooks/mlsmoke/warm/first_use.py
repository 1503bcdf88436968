"""What a job would otherwise import on first use, imported by the worker in a thread
once it has been idle a moment, and joined before the next fork.

Every torch.optim optimizer imports ``torch._dynamo`` on its first ``add_param_group``
(torch's lazy ``_disable_dynamo``), and that import costs about as much as torch's
own; the gate and the doctest runner are mlsmoke's modules, never the project's. The
worker says it is ready before these imports: a job already waiting is forked at once
and imports what it needs itself; a job that arrives during the imports waits for the
rest. A thread, so that the worker still answers the hooks (signals, exits) meanwhile.
"""

from __future__ import annotations

import importlib
import threading
import time

from mlsmoke.warm.preload import native_threads

MODULES = (
    "torch._dynamo",
    "mlsmoke.overfit.process.worker",
    "mlsmoke.overfit.gate",
    "mlsmoke.doctests.runner",
)
START_DELAY = 0.1  # seconds with no job running before the imports begin
THREAD_EXIT_LIMIT = 0.5  # seconds for the joined thread to leave /proc/self/task


class FirstUse:
    """The imports: not started, running, or done."""

    def __init__(self, modules: tuple[str, ...] = MODULES) -> None:
        self.modules = modules
        self._thread: threading.Thread | None = None
        self.done = False

    @property
    def pending(self) -> bool:
        return self._thread is None and not self.done

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if not self.pending:
            return
        self._thread = threading.Thread(
            target=_import_all, args=(self.modules,), name="mlsmoke-first-use"
        )
        self._thread.daemon = True
        self._thread.start()

    def finish(self, native_threads_before: int) -> bool:
        """Wait for the imports; whether the process is again down to its threads of
        before, so that forking it is safe. Not started: nothing to wait for."""
        if self._thread is None:
            return True
        self._thread.join()
        self._thread = None
        self.done = True
        deadline = time.monotonic() + THREAD_EXIT_LIMIT
        while native_threads() > native_threads_before:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)
        return threading.active_count() == 1


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the job that needs it meets the same error, and reports it
            pass
