"""The cpu-threads rule decides from two measured step times; injected here."""

from __future__ import annotations

import dataclasses

import pytest
from rules_test import figures

from mlsmoke.profile.figures import Threads
from mlsmoke.profile.report import thread_lines
from mlsmoke.profile.rules import cpu_threads, recommend
from mlsmoke.profile.thread_timing import clearly_slower, other_thread_count


def timed(default: int, default_ms: float, other: int | None, other_ms: float | None):
    return dataclasses.replace(
        figures(),
        threads=Threads(default, default_ms / 1e3, other,
                        None if other_ms is None else other_ms / 1e3),
    )  # fmt: skip


def test_one_thread_30x_faster_recommends_one_thread() -> None:
    (found,) = [r for r in recommend(timed(2, 600, 1, 20)) if r.rule == "cpu-threads"]
    assert "600.00 ms on 2 threads" in found.measured
    assert "20.00 ms on 1 thread: 30.0x faster (threshold 1.5x)" in found.measured
    assert "OMP_NUM_THREADS=1" in found.change
    assert "torch.set_num_threads(1)" in found.change


def test_more_threads_faster_recommends_that_count() -> None:
    found = cpu_threads.check(timed(1, 40, 4, 10))
    assert found is not None and "4.0x faster" in found.measured
    assert "OMP_NUM_THREADS=4" in found.change
    assert "torch.set_num_threads(4)" in found.change


@pytest.mark.parametrize(
    "default_ms, other_ms",
    [(14.0, 10.0), (15.0, 10.0), (10.0, 300.0)],  # 1.4x, 1.5x, the other slower
)
def test_silent_within_its_threshold_or_when_the_other_count_is_slower(
    default_ms: float, other_ms: float
) -> None:
    assert cpu_threads.check(timed(2, default_ms, 1, other_ms)) is None


def test_silent_without_a_second_count_or_off_the_cpu() -> None:
    assert cpu_threads.check(timed(1, 10, None, None)) is None
    assert cpu_threads.check(dataclasses.replace(figures(), threads=None)) is None


def test_the_summary_reports_both_counts() -> None:
    (line,) = thread_lines(Threads(2, 0.6, 1, 0.02))
    assert line == (
        "  CPU threads: 600.00 ms a step on 2 threads (this process's),"
        " 20.00 ms on 1 thread (30.0x faster)"
    )
    (slower,) = thread_lines(Threads(1, 0.02, 2, 0.6))
    assert slower.endswith("600.00 ms on 2 threads (30.0x slower)")
    (alone,) = thread_lines(Threads(1, 0.02))
    assert alone.endswith("no other count to compare on this machine")


@pytest.mark.parametrize(
    "default, cpus, other", [(2, 2, 1), (8, 8, 1), (1, 2, 2), (1, 1, None)]
)
def test_the_other_count_is_one_or_the_cpus(default: int, cpus: int, other) -> None:
    assert other_thread_count(default, cpus) == other


def test_the_other_count_is_timed_until_clearly_slower() -> None:
    assert clearly_slower(seconds=3.5, updates=1, default_step_seconds=0.02)
    assert not clearly_slower(seconds=0.03, updates=1, default_step_seconds=0.02)
    assert not clearly_slower(seconds=0.0, updates=0, default_step_seconds=0.02)
