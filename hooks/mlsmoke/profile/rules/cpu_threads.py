"""On the CPU, the step runs faster at another thread count than the process's own.

Measured, not guessed (``thread_timing.py``): the unprofiled step at the process's
thread count and at one other, 1 when it runs more, else the CPUs it may use. Small
ops on several threads spend their time handing work over: on a 2-CPU machine a tiny
model's step measured 30x slower on 2 threads than on 1.

Threshold: the other count is more than 1.5x faster, beyond the noise of a busy
machine's step times.
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.rules import Recommendation

NAME = "cpu-threads"
FASTER = 1.5


def check(figures: Figures) -> Recommendation | None:
    threads = figures.threads
    if threads is None or threads.other is None or threads.other_step_seconds is None:
        return None
    ratio = threads.other_is_faster_by
    if ratio is None or ratio <= FASTER:
        return None
    measured = (
        f"a step takes {threads.default_step_seconds * 1e3:.2f} ms on"
        f" {_threads(threads.default)} (this process's count) and"
        f" {threads.other_step_seconds * 1e3:.2f} ms on {_threads(threads.other)}:"
        f" {ratio:.1f}x faster (threshold {FASTER:g}x)"
    )
    count = threads.other
    if count == 1:
        change = (
            "OMP_NUM_THREADS=1 in the training's environment, or"
            " torch.set_num_threads(1) before training: ops this small lose more to"
            " handing work between threads than they gain"
        )
    else:
        change = (
            f"OMP_NUM_THREADS={count} in the training's environment (or unset it), or"
            f" torch.set_num_threads({count}) before training"
        )
    return Recommendation(NAME, measured, change)


def _threads(count: int) -> str:
    return "1 thread" if count == 1 else f"{count} threads"
