"""--record and --check on figures: the same device only, the tolerance, and the
phase that explains a slowdown marked, not the noise beside it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rules_test import figures

from mlsmoke.errors import UsageError
from mlsmoke.profile import baseline
from mlsmoke.profile.phases import DATA_WAIT, FORWARD

MS = {DATA_WAIT: 300, FORWARD: 14_000}  # µs


def test_a_twice_slower_forward_fails_and_only_the_forward_is_marked(
    tmp_path: Path,
) -> None:
    record = tmp_path / baseline.FILE_NAME
    baseline.record(record, figures(MS, steps_per_second=60.0))
    slower = figures({DATA_WAIT: 1300, FORWARD: 28_000}, steps_per_second=30.0)
    held, lines = baseline.check(record, slower, baseline.DEFAULT_TOLERANCE)
    assert not held and "-50%, beyond the tolerance of -20%" in lines[0]
    changed = [line.split()[0] for line in lines if "<- changed" in line]
    assert changed == ["forward"]  # +1 ms of data wait is noise in a 14 ms step


def test_within_the_tolerance_holds(tmp_path: Path) -> None:
    record = tmp_path / baseline.FILE_NAME
    baseline.record(record, figures(MS, steps_per_second=60.0))
    held, lines = baseline.check(record, figures(MS, steps_per_second=50.0), 0.2)
    assert held and len(lines) == 1 and "within" in lines[0]


def test_another_device_is_never_compared(tmp_path: Path) -> None:
    record = tmp_path / baseline.FILE_NAME
    baseline.record(record, figures(MS, steps_per_second=60.0))
    other = dataclasses.replace(figures(MS), device_name="NVIDIA A100")
    with pytest.raises(UsageError, match="no record for gate 'default' on 'NVIDIA"):
        baseline.check(record, other, 0.2)


def test_recording_keeps_other_devices(tmp_path: Path) -> None:
    record = tmp_path / baseline.FILE_NAME
    baseline.record(record, figures(MS))
    baseline.record(record, dataclasses.replace(figures(MS), device_name="gpu"))
    assert set(baseline.read(record)["gates"]["default"]) == {"cpu: test", "gpu"}
