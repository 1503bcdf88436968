"""``mlsmoke profile`` end to end, on CPU, for real: a loader that sleeps a known
time per sample, a model that sleeps a known time per forward."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from profile_cli import make_project, run_profile

from mlsmoke.profile.phases import PHASES, range_name

# One sample a batch: one sleep a step in the data as in the forward, so that the
# late wake-ups of a busy machine fall on both alike.
ITEM_SLEEP = 0.02  # 20 ms of data a step
FORWARD_SLEEP = 0.02  # 20 ms of forward a step
KNOWN_DATA_SHARE = 0.5
STEPS = ("--steps", "8", "--warmup", "3")


def test_a_loader_without_workers_shows_its_share_and_fires_the_workers_rule(
    project: Path,
) -> None:
    trace = project / "step.json.gz"
    run = run_profile(
        project, *STEPS, "--trace", str(trace),
        ITEM_SLEEP=str(ITEM_SLEEP), FORWARD_SLEEP=str(FORWARD_SLEEP), BATCH="1",
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    shares = run.outcome["figures"]["shares"]
    assert abs(shares["data_wait"] - KNOWN_DATA_SHARE) <= 0.10, shares
    assert run.rules == ["data-workers"]
    assert "num_workers=0" in run.stdout and "DataLoader(num_workers=" in run.stdout
    assert "profiled_project.py:" in run.stdout  # the line that builds the loader
    events = json.loads(gzip.open(trace).read())["traceEvents"]
    names = {event.get("name") for event in events}
    assert {range_name(phase) for phase in PHASES} <= names
    assert f"trace: {trace}" in run.stdout and "ui.perfetto.dev" in run.stdout


def test_with_workers_the_workers_rule_is_silent(project: Path) -> None:
    run = run_profile(
        project, *STEPS, ITEM_SLEEP=str(ITEM_SLEEP / 2),
        FORWARD_SLEEP=str(FORWARD_SLEEP), BATCH="1", WORKERS="2",
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    assert "data-workers" not in run.rules
    assert run.outcome["figures"]["loader"]["num_workers"] == 2
    # the samples are read beside the step: the wait is below the 50% without workers
    assert run.outcome["figures"]["shares"]["data_wait"] < KNOWN_DATA_SHARE


def test_a_clean_small_model_fires_no_recommendation(tmp_path: Path) -> None:
    project = make_project(tmp_path / "clean", batch="batch")
    run = run_profile(project, *STEPS)
    assert run.code == 0, run.stdout + run.stderr
    assert run.rules == []
    assert "recommendations" not in run.stdout
    figures = run.outcome["figures"]
    assert figures["steps_per_second"] > 0 and figures["batch_size"] == 10


def test_record_then_check_fails_on_a_model_made_twice_as_slow(project: Path) -> None:
    slow, slower = {"FORWARD_SLEEP": "0.01"}, {"FORWARD_SLEEP": "0.02"}
    recorded = run_profile(project, *STEPS, "--record", **slow)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    record = json.loads((project / "mlsmoke-profile.json").read_text())
    (device,) = record["gates"]["default"]
    assert device.startswith("cpu")
    held = run_profile(project, *STEPS, "--check", **slow)
    assert held.code == 0, held.stdout
    failed = run_profile(project, *STEPS, "--check", **slower)
    assert failed.code == 1, failed.stdout
    assert "beyond the tolerance" in failed.stdout
    changed = [line for line in failed.stdout.splitlines() if "<- changed" in line]
    assert any(line.split()[0] == "forward" for line in changed), failed.stdout
    assert failed.outcome["check"]["passed"] is False
