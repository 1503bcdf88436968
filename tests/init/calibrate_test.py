"""max-steps (and, when needed, timeout) from three seeds' runs: at least twice the
slowest, rounded up to a readable number."""

from __future__ import annotations

import pytest

from mlsmoke.adopt.calibrate import (
    SeedRun,
    applies,
    calibration,
    max_steps_for,
    readable_ceiling,
    timeout_for,
)


@pytest.mark.parametrize(
    ("value", "readable"),
    [(1, 1), (7, 7), (10, 10), (11, 15), (74, 75), (86, 90), (100, 100),
     (130, 150), (460, 500), (501, 550), (1840, 2000), (12001, 15000)],
)  # fmt: skip
def test_readable_ceiling(value, readable):
    assert readable_ceiling(value) == readable


@pytest.mark.parametrize(
    ("steps", "max_steps"),
    [([230, 223, 229], 500), ([34, 43, 29], 90), ([3, 2, 4], 20), ([150], 300)],
)
def test_max_steps_leave_twice_the_slowest_runs_steps(steps, max_steps):
    assert max_steps_for(steps) == max_steps
    assert max_steps >= 2 * max(steps)


def test_a_seed_that_does_not_pass_leaves_max_steps_alone():
    runs = [
        SeedRun(0, True, 120, seconds=3.0),
        SeedRun(1, False, 480, "not-memorized: the loss went 2.3 -> 1.9"),
    ]
    result = calibration(runs, timeout=60.0)
    assert result.max_steps is None
    assert "did not pass with seed 1 (not-memorized" in result.summary()


def test_the_timeout_gets_headroom_only_when_it_has_too_little():
    assert timeout_for([10.0, 12.5], 60.0) is None
    assert timeout_for([31.0, 53.1], 60.0) == 150
    runs = [SeedRun(0, True, 230, seconds=53.1), SeedRun(1, True, 223, seconds=40.0)]
    result = calibration(runs, timeout=60.0)
    assert (result.max_steps, result.timeout) == (500, 150)
    assert result.summary() == (
        "max-steps = 500: at least 2x the slowest of 2 seeds (230 steps; seed 0: 230,"
        " seed 1: 223); timeout = 150: 2x the slowest run's 53 s"
    )
    assert result.comment() == (
        "at least 2x the slowest of seeds 0, 1 (230 steps), by mlsmoke init"
    )


@pytest.mark.parametrize(
    ("table", "calibrated"),
    [
        ({"script": "train.py"}, True),
        ({"model": "m:f", "batch": "m:b", "tiers": {"pr": {}}}, True),
        ({"script": "train.py", "max-steps": 300}, False),  # the user's own
        ({"small": {"model": "m:f"}, "large": {"model": "m:g"}}, False),  # gates
        (None, False),
    ],
)
def test_one_gate_without_max_steps_is_calibrated(table, calibrated):
    assert applies(table) is calibrated
