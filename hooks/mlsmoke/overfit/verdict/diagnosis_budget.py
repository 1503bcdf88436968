"""How much a failing gate may spend after its run: every training probe and
intervention of one gate run shares one budget, counted in the process's CPU time
from the start of the run, so that the whole gate is bounded by design.

The run and everything after it take at most FAILING_GATE_CPU_SECONDS together, or,
when the run alone took most of that, RUN_MULTIPLE times the run's own time more.
CPU time, not the clock: a loaded machine slows every step alike, and a budget by
the clock would cut the same probes at a different step on every load, and change
the diagnosis with it. The clock still bounds each probe (``probes.probe_timeout``).
A probe the budget ends is marked ``timed_out``: its curve refutes nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from mlsmoke.overfit.training.evidence import Evidence

FAILING_GATE_CPU_SECONDS = 8.0
RUN_MULTIPLE = 2.0

EarlyStop = Callable[[list[float], "float | None"], bool]


def cpu_now() -> float:
    return time.process_time()


def deadline_after_run(run_started: float, multiple: float | None = None) -> float:
    """The CPU time (``cpu_now()``) by which a gate whose run began at
    ``run_started`` ends its probes and interventions: ``multiple`` (RUN_MULTIPLE)
    times the run's own time after it, or what is left of FAILING_GATE_CPU_SECONDS."""
    multiple = RUN_MULTIPLE if multiple is None else multiple
    now = cpu_now()
    run_seconds = now - run_started
    return now + max(FAILING_GATE_CPU_SECONDS - run_seconds, multiple * run_seconds)


def stopping_by(deadline: float, stop_early: EarlyStop | None) -> EarlyStop:
    """``stop_early`` that also ends the probe once ``deadline`` has passed."""

    def stop(losses: list[float], target: float | None) -> bool:
        if cpu_now() >= deadline:
            return True
        return stop_early is not None and stop_early(losses, target)

    return stop


def mark_if_cut(evidence: Evidence, deadline: float) -> Evidence:
    """A probe that ended short of its target past ``deadline`` was cut by the
    budget, not by its curve."""
    if not evidence.reached and cpu_now() >= deadline:
        evidence.timed_out = True
    return evidence


def earliest(deadline: float | None, seconds: float | None) -> float | None:
    """The earlier of ``deadline`` and ``seconds`` from now (None: no limit)."""
    limits = [deadline, None if seconds is None else cpu_now() + seconds]
    known = [limit for limit in limits if limit is not None]
    return min(known) if known else None


def left(deadline: float | None) -> float:
    """CPU seconds left before ``deadline`` (infinite without one)."""
    return math.inf if deadline is None else max(deadline - cpu_now(), 0.0)


def note(after_run: float, deadline: float, multiple: float | None = None) -> str:
    """``-v``: what the probes and interventions spent, begun at ``after_run``."""
    multiple = RUN_MULTIPLE if multiple is None else multiple
    spent = cpu_now() - after_run
    return (
        f"probes and interventions: {spent:.2f} s CPU, of the"
        f" {deadline - after_run:.2f} s the gate allows after its run"
        f" (max({FAILING_GATE_CPU_SECONDS:g} s - the run, {multiple:g} x the run))"
    )
