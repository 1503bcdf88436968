"""Signals to the hook: the worker goes with it, the temporary files too, and the exit
code says which signal (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."""

from __future__ import annotations

import signal
import sys

import pytest

from .faultkit import Fault, assert_clean

# From the signal to the CLI's exit: the worker's reaping (at most 2 s before it is
# killed) and room for a loaded 2-core machine.
BOUND = 8.0


@pytest.mark.parametrize(
    ("signum", "target", "code", "says"),
    [
        (signal.SIGTERM, "cli", 143, "stopped by SIGTERM"),
        (signal.SIGHUP, "cli", 129, "stopped by SIGHUP"),
        (signal.SIGINT, "group", 130, "interrupted"),  # Ctrl-C in a terminal
        (signal.SIGINT, "cli", 130, "interrupted"),
    ],
    ids=["sigterm", "sighup", "ctrl-c", "sigint-to-the-hook"],
)
def test_a_stopped_hook_reaps_its_worker_and_exits_128_plus_the_signal(
    fault_project, mlsmoke, signum, target, code, says
):
    fault_project(model="fault_factories:hung_model", timeout=60)
    fault = Fault(signum, reached="model", target=target)
    outcome = mlsmoke("overfit", "--no-cache", fault=fault)
    assert outcome.code == code, outcome.output
    assert outcome.stderr.strip().endswith(f"mlsmoke overfit: {says}")
    assert "PASS" not in outcome.stdout
    assert outcome.seconds < BOUND, outcome.seconds
    assert_clean(outcome)


def test_a_killed_hook_takes_its_worker_along(fault_project, mlsmoke):
    fault_project(model="fault_factories:hung_model", timeout=60)
    fault = Fault(signal.SIGKILL, reached="model")
    outcome = mlsmoke("overfit", "--no-cache", fault=fault)
    assert outcome.code == -signal.SIGKILL
    assert not outcome.processes  # the parent-death signal killed the worker
    assert outcome.seconds < BOUND, outcome.seconds
    # Nothing could clean up after a SIGKILL: the next run does.
    assert len(outcome.files) == 1 and outcome.files[0].startswith("mlsmoke-overfit-")
    fault_project(timeout=5)
    after = mlsmoke("overfit", "--no-cache")
    assert after.code == 0, after.output
    assert_clean(after)


def test_a_doctest_stopped_by_sigterm_reaps_its_runner(tmp_path, mlsmoke, monkeypatch):
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "faults"\n')
    (root / "waits.py").write_text(
        '"""\n>>> import fault_marker\n>>> import threading; threading.Event().wait()'
        '\n"""\n'
    )
    (root / "fault_marker.py").write_text(
        "import os\nopen(os.environ['MLSMOKE_FAULT_MARKER'], 'a').write('doctest\\n')\n"
    )
    fault = Fault(signal.SIGTERM, reached="doctest")
    outcome = mlsmoke("doctest", "waits.py", cwd=root, fault=fault)
    assert outcome.code == 143, outcome.output
    assert "mlsmoke doctest: stopped by SIGTERM" in outcome.stderr
    assert outcome.seconds < BOUND, outcome.seconds
    assert_clean(outcome)


def test_a_factory_raising_keyboard_interrupt_is_the_projects_error(
    fault_project, mlsmoke
):
    fault_project(model="fault_factories:interrupting_model")
    outcome = mlsmoke("overfit", "--no-cache")
    assert outcome.code == 1, outcome.output
    assert "overfit smoke: FAIL train-error" in outcome.stdout
    assert "building the model raised KeyboardInterrupt" in outcome.stdout
    assert "in interrupting_model" in outcome.stdout
    assert "interrupted" not in outcome.stderr
    assert_clean(outcome)
