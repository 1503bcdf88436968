"""Bad input gets the gate's treatment: the key, the line, and a documented exit
code; never a traceback from mlsmoke."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from profile_cli import make_project, run_profile


@pytest.mark.parametrize("steps", ["0", "-3", "many"])
def test_steps_below_one_is_a_usage_error(project: Path, steps: str) -> None:
    run = run_profile(project, "--steps", steps)
    assert run.code == 2
    assert "--steps" in run.stderr and "Traceback" not in run.stderr
    assert run.json == []  # nothing ran


def test_a_factory_that_does_not_import_names_its_key(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", batch="no_such_loader")
    run = run_profile(project, "--steps", "2")
    assert run.code == 2, run.stdout
    assert "config-error: tool.mlsmoke.overfit.batch:" in run.stdout
    assert "no_such_loader" in run.stdout


def test_a_loader_that_raises_is_a_data_error_with_its_line(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", batch="broken_loader")
    run = run_profile(project, "--steps", "2")
    assert run.code == 1, run.stdout
    assert "data-error" in run.stdout and "shard-3.bin is missing" in run.stdout
    assert "profiled_project.py" in run.stdout  # the project's frame
    assert run.outcome["status"] == "data-error"


def test_a_device_that_is_not_there_says_so(project: Path) -> None:
    run = run_profile(project, "--steps", "2", "--device", "cuda")
    assert run.code == 2, run.stdout
    assert "--device: device 'cuda' is not available here" in run.stdout


def test_a_device_key_that_is_not_a_device_names_the_option(project: Path) -> None:
    run = run_profile(project, "--device", "gpu0")
    assert run.code == 2 and "--device" in run.stderr


def test_check_without_a_record_is_a_usage_error(project: Path) -> None:
    run = run_profile(project, "--steps", "2", "--check")
    assert run.code == 2, run.stdout
    assert "no record for gate 'default'" in run.stderr
    assert "--record" in run.stderr


def test_a_broken_record_file_fails_before_anything_runs(project: Path) -> None:
    (project / "mlsmoke-profile.json").write_text("{not json")
    run = run_profile(project, "--check")
    assert run.code == 2 and "not a profile record" in run.stderr
    assert run.json == []


def test_a_trace_path_that_is_not_gzipped_json_is_a_usage_error(
    project: Path,
) -> None:
    run = run_profile(project, "--trace", str(project / "trace.txt"))
    assert run.code == 2 and ".json.gz" in run.stderr


def test_a_trace_that_cannot_be_written_names_trace(project: Path) -> None:
    trace = project / "no-such-dir" / "trace.json.gz"
    run = run_profile(project, "--trace", str(trace))
    assert run.code == 2
    assert f"--trace {trace}: no such directory" in run.stderr, run.stderr


def test_a_loader_that_never_returns_is_killed_at_the_timeout_with_its_workers(
    project: Path,
) -> None:
    pids = project / "pids.txt"
    run = run_profile(project, "--timeout", "4", WORKERS="1", HANG_PID_FILE=str(pids))
    assert run.code == 1, run.stdout + run.stderr
    assert "timeout: no profile within the timeout (4 s, --timeout)" in run.stdout
    started = [int(pid) for pid in pids.read_text().split()]
    assert started  # the DataLoader's worker process read the sample
    # A SIGKILL is delivered, not waited for: give a loaded machine a moment.
    deadline = time.monotonic() + 5
    while [pid for pid in started if _running(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in started if _running(pid)]


def _running(pid: int) -> bool:
    """Whether ``pid`` runs: a killed process whose parent died may wait as a zombie
    for init to reap it, and that is not running."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status
