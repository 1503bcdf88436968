"""On the CPU, the step timed at a second thread count beside the process's own.

Small ops spread over threads spend their time waiting for each other: on a 2-CPU
machine a tiny model's step measured 30x slower on 2 threads than on 1. The other
count is 1 when the process runs more, else the CPUs it may use; the
``cpu-threads`` rule (``rules/cpu_threads.py``) decides from the two times. The other
count is timed until it is clearly slower (CLEARLY_SLOWER): the rule only says
something when it is faster, and a slow count can cost seconds an update.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from mlsmoke.overfit.training.device import device_kind
from mlsmoke.profile import machine
from mlsmoke.profile.figures import Threads

CLEARLY_SLOWER = 2.0  # the other count's mean update, against the process's own


def other_thread_count(default: int, cpus: int) -> int | None:
    """The thread count to compare ``default`` with; None when there is none."""
    if default > 1:
        return 1
    return cpus if cpus > 1 else None


def clearly_slower(seconds: float, updates: int, default_step_seconds: float) -> bool:
    """Whether ``updates`` updates taking ``seconds`` are clearly slower than the
    process's own step: no more of them are needed."""
    return updates > 0 and seconds / updates > CLEARLY_SLOWER * default_step_seconds


def time_steps(step: Callable[[], None], steps: int, device: str) -> float:
    """Seconds a step, over ``steps`` steps."""
    machine.synchronize(device)
    started = time.perf_counter()
    for _ in range(steps):
        step()
    machine.synchronize(device)
    return (time.perf_counter() - started) / max(steps, 1)


def with_other_threads(
    step: Callable[[], None], steps: int, device: str, default_step_seconds: float
) -> Threads | None:
    """The step at the other thread count, then the process's own count again; None
    off the CPU."""
    if device_kind(device) != "cpu":
        return None
    default = torch.get_num_threads()
    threads = Threads(default, default_step_seconds)
    other = other_thread_count(default, machine.cpu_count())
    if other is None:
        return threads
    torch.set_num_threads(other)
    try:
        started, done = time.perf_counter(), 0
        while done < steps:
            step()
            done += 1
            seconds = time.perf_counter() - started
            if clearly_slower(seconds, done, default_step_seconds):
                break
    finally:
        torch.set_num_threads(default)
    threads.other, threads.other_step_seconds = other, seconds / done
    return threads
