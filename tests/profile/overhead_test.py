"""The profiler's own cost is stated, and past half the step the split is called
untrustworthy, with what to do; in factory mode as in script mode."""

from __future__ import annotations

import dataclasses

from rules_test import figures

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.report import overhead_lines, summary


def profiled(unprofiled_ms: float, profiled_ms: float) -> Figures:
    base = figures()
    scale = profiled_ms / 1e3 / base.step_seconds
    split = {phase: seconds * scale for phase, seconds in base.split.items()}
    return dataclasses.replace(
        base, steps_per_second=1e3 / unprofiled_ms, step_seconds=profiled_ms / 1e3,
        split=split,
    )  # fmt: skip


def test_overhead_is_the_profiled_step_less_the_unprofiled() -> None:
    measured = profiled(unprofiled_ms=20, profiled_ms=30)
    assert abs(measured.profiler_overhead_seconds - 0.010) < 1e-9
    assert abs(measured.profiler_overhead_share - 1 / 3) < 1e-9
    (line,) = overhead_lines(measured)
    assert line == (
        "  profiler overhead: 10.00 ms a step, 33% of the profiled step (unprofiled"
        " 20.00 ms)"
    )


def test_more_than_half_the_step_makes_the_split_untrustworthy() -> None:
    line, warning = overhead_lines(profiled(unprofiled_ms=10, profiled_ms=30))
    assert "20.00 ms a step, 67% of the profiled step" in line
    assert "the split is not trustworthy" in warning
    assert "the real model size and batch" in warning and "--steps" in warning
    assert "the split is not trustworthy" in summary(profiled(10, 30), [], "t.json.gz")


def test_a_profiled_step_faster_than_the_unprofiled_has_no_overhead() -> None:
    measured = profiled(unprofiled_ms=30, profiled_ms=29)
    assert measured.profiler_overhead_seconds == 0.0
    assert "0.00 ms a step, 0%" in overhead_lines(measured)[0]


def test_new_figures_survive_json() -> None:
    from mlsmoke.profile.figures import Model, Threads

    measured = dataclasses.replace(
        profiled(10, 30), model=Model("GPT", 30080, "model.py:69"),
        threads=Threads(2, 0.6, 1, 0.02), tokens_per_step=256, forwards_per_step=4,
    )  # fmt: skip
    data = measured.to_json()
    assert data["tokens_per_second"] == 100 * 256
    assert data["samples_per_second"] == 100 * 32 * 4
    assert Figures.from_json(data) == measured
