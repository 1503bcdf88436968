"""Faults in a job the warm worker forked: it hangs, it forks, it changes the global
state. The job fails or passes as it would in a process of its own, leaves nothing
behind, and the worker serves the next job unharmed."""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

import pytest

from .faultkit import Fault, Outcome, assert_clean, run_cli

WORKER_ON = {"MLSMOKE_WORKER": "1", "MLSMOKE_WORKER_IDLE": "60"}


@pytest.fixture
def warm(tmp_path: Path, fault_project):
    """``warm(*args, **options)``: the CLI with the worker on; one environment (so one
    worker) for the test; the worker killed at the end."""
    tag = uuid.uuid4().hex
    env = {**WORKER_ON, "MLSMOKE_WORKER_DIR": str(tmp_path / "workers")}
    started: set[int] = set()

    def run(*args: str, **options) -> Outcome:
        outcome = run_cli(
            args,
            tmp_path / "project",
            tmp_path / "scratch",
            env={**env, **options.pop("env", {})},
            tag=tag,
            **options,
        )
        started.update(outcome.workers)
        return outcome

    yield run
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _passes_in_the_same_worker(warm, fault_project, before: Outcome) -> None:
    fault_project()  # back to the tiny model
    after = warm("overfit", "--no-cache")
    assert after.code == 0 and "PASS" in after.stdout, after.output
    assert after.workers == before.workers, (before.workers, after.workers)
    assert_clean(after)


def test_a_hang_in_a_forked_job_ends_at_its_timeout(fault_project, warm):
    fault_project()
    assert warm("overfit", "--no-cache").code == 0  # the worker is up
    fault_project(model="fault_factories:hangs_in_training_model", timeout=1.5)
    outcome = warm("overfit", "--no-cache", fault=Fault(0, reached="training"))
    assert outcome.code == 1 and "overfit smoke: FAIL timeout" in outcome.stdout
    assert "training was still running" in outcome.stdout
    assert "fault_factories.py" in outcome.stdout  # the user's stack, from the child
    assert outcome.seconds < 1.5 + 2.5 + 6.0, outcome.seconds
    assert outcome.workers, "the worker went down with its job"
    assert_clean(outcome)
    _passes_in_the_same_worker(warm, fault_project, outcome)


def test_what_a_forked_job_starts_does_not_outlive_it(
    fault_project, warm, process_starting_model
):
    fault_project(model=process_starting_model)
    outcome = warm("overfit", "--no-cache")
    assert outcome.code == 0 and "PASS" in outcome.stdout, outcome.output
    assert outcome.workers
    assert_clean(outcome)  # the worker's children: none but running jobs
    _passes_in_the_same_worker(warm, fault_project, outcome)


MEDDLING = '''

def meddling_model():
    """Changes every global it can reach, then builds the model."""
    import random, signal
    os.environ["LEAKED_BY_A_JOB"] = "yes"
    os.chdir("/")
    sys.path.insert(0, "/leaked/by/a/job")
    sys.argv[:] = ["leaked"]
    random.seed(5)
    torch.manual_seed(5)
    torch.set_num_threads(1)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.modules["leaked_by_a_job"] = sys
    return Tiny()


def inspecting_model():
    import signal
    leaks = {
        "environ": os.environ.get("LEAKED_BY_A_JOB"),
        "cwd": os.getcwd() == "/",
        "path": "/leaked/by/a/job" in sys.path,
        "argv": sys.argv != ["-c"],
        "torch seed": torch.initial_seed() == 5,
        "threads": torch.get_num_threads() == 1 and os.cpu_count() > 1,
        "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_IGN,
        "module": "leaked_by_a_job" in sys.modules,
    }
    found = [name for name, leaked in leaks.items() if leaked]
    if found:
        raise RuntimeError("leaked into this job: " + ", ".join(found))
    return Tiny()
'''


def test_a_job_that_changes_global_state_leaves_the_next_job_untouched(
    fault_project, warm
):
    root = fault_project(model="fault_factories:meddling_model")
    with (root / "fault_factories.py").open("a") as factories:
        factories.write(MEDDLING)
    first = warm("overfit", "--no-cache")
    assert first.code == 0 and first.workers, first.output
    fault_project(model="fault_factories:inspecting_model")
    with (root / "fault_factories.py").open("a") as factories:
        factories.write(MEDDLING)
    second = warm("overfit", "--no-cache")
    assert second.code == 0 and "PASS" in second.stdout, second.output
    assert second.workers == first.workers
    assert_clean(second)
