"""A ``worker start`` whose detached starter is killed before its worker listens: the
next start (or hook) waits for that worker rather than starting a second. Real CLI
runs, real SIGKILLs, the workers' processes counted by what they mapped."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from .start_test import STARTUP
from .warmkit import WarmProject, wait_until


def _imports_torch(pid: int) -> bool:
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


class _TorchWorkers:
    """Every warm worker of the project seen with torch loaded, while it runs."""

    def __init__(self, project: WarmProject) -> None:
        self.project, self.seen = project, set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.02):
            self.seen |= set(filter(_imports_torch, self.project.warm_pids()))

    def stop(self) -> set[int]:
        self._done.set()
        self._thread.join()
        return self.seen


@pytest.mark.parametrize("killed_after", [0.3, 1.0, 2.0])
def test_a_start_after_a_killed_starter_leaves_one_worker(
    project: WarmProject, killed_after: float
):
    watch = _TorchWorkers(project)
    # the starter (and whatever it runs but the worker) is SIGKILLed after this long
    first = project.start_worker(limit=killed_after)
    again = project.start_worker(limit=STARTUP)
    overfit = project.overfit()
    seen = watch.stop()
    assert first.code == again.code == overfit.code == 0, overfit.output
    (worker,) = project.warm_pids()
    assert seen == {worker}, f"workers that imported torch: {sorted(seen)}"
    assert project.seen()[0]["ppid"] == worker
    assert wait_until(lambda: not project.others(), limit=STARTUP)


def test_a_hook_after_a_killed_starter_waits_for_its_worker(project: WarmProject):
    watch = _TorchWorkers(project)
    assert project.start_worker(limit=0.5).code == 0
    overfit = project.overfit()
    seen = watch.stop()
    assert overfit.code == 0, overfit.output
    (worker,) = project.warm_pids()
    assert seen == {worker}, f"workers that imported torch: {sorted(seen)}"
    assert project.seen()[0]["ppid"] == worker
