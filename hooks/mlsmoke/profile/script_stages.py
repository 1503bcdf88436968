"""The stages a profiled script's optimizer updates go through, in order, and the time
of each stage from the moments its updates ended. Pure: no torch here.

A script is not stepped by the profile, it steps itself: the profile acts only at the
end of an update (its ``optimizer.step()``), so every stage is a run of whole updates.
The first update starts with the script (imports, data, model), not at a step, so at
least one warm-up update comes before anything is timed. The updates at the other
thread count end early once they are clearly slower (``thread_timing.py``): on a busy
2-CPU machine one update of a tiny GPT took 3.5 s on 2 threads and 21 ms on 1.
"""

from __future__ import annotations

WARMUP = "warmup"
TIMED = "timed"  # unprofiled, at the process's thread count: steps/s
OTHER_THREADS = "other-threads"  # unprofiled, at the other thread count
PROFILER_WARMUP = "profiler-warmup"  # the profiler's own warm-up step
PROFILED = "profiled"
PROFILING = (PROFILER_WARMUP, PROFILED)


def plan(warmup: int, steps: int, other_threads: bool) -> list[str]:
    """The stage of each update, from the first."""
    stages = [WARMUP] * max(warmup, 1) + [TIMED] * steps
    if other_threads:
        stages += [OTHER_THREADS] * steps
    return stages + [PROFILER_WARMUP] + [PROFILED] * steps


def stage_seconds(stages: list[str], ended: list[float], stage: str) -> float | None:
    """Seconds an update of ``stage`` took, from ``ended[i]``, the time update ``i``
    ended; None when the stage did not run whole. The stage's updates are one run,
    and the update before it ended when its first began."""
    indices = [i for i, name in enumerate(stages) if name == stage]
    if not indices or indices[0] == 0 or indices[-1] >= len(ended):
        return None
    first, last = indices[0], indices[-1]
    return (ended[last] - ended[first - 1]) / len(indices)


def cut_short(stages: list[str], index: int) -> list[str]:
    """``stages`` without the updates of ``stages[index]``'s stage after ``index``."""
    stage = stages[index]
    rest = [name for name in stages[index + 1 :] if name != stage]
    return stages[: index + 1] + rest
