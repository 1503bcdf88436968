"""Processes the project's code starts: none outlives the hook, whether the worker (or
the doctest runner) ends by itself, is killed at its timeout, or the hook is stopped.
The process table is the judge: every process the test starts carries its tag."""

from __future__ import annotations

import signal
import sys

import pytest

from .faultkit import Fault, assert_clean


def test_children_of_a_passing_gate_do_not_outlive_it(
    fault_project, mlsmoke, process_starting_model
):
    fault_project(model=process_starting_model)
    outcome = mlsmoke("overfit", "--no-cache")
    assert outcome.code == 0 and "PASS" in outcome.stdout, outcome.output
    assert_clean(outcome)


def test_children_of_a_gate_killed_at_its_timeout_do_not_outlive_it(
    fault_project, mlsmoke
):
    fault_project(model="fault_factories:spawning_hung_model", timeout=1)
    outcome = mlsmoke("overfit", "--no-cache")
    assert outcome.code == 1 and "timeout" in outcome.stdout, outcome.output
    assert_clean(outcome)


@pytest.mark.parametrize(
    ("signum", "target", "code"),
    [
        (signal.SIGTERM, "cli", 143),
        (signal.SIGHUP, "cli", 129),
        (signal.SIGINT, "group", 130),
    ],
    ids=["sigterm", "sighup", "ctrl-c"],
)
def test_children_of_a_stopped_gate_do_not_outlive_the_hook(
    fault_project, mlsmoke, signum, target, code
):
    fault_project(model="fault_factories:spawning_hung_model", timeout=60)
    fault = Fault(signum, reached="model", target=target)
    outcome = mlsmoke("overfit", "--no-cache", fault=fault)
    assert outcome.code == code, outcome.output
    assert_clean(outcome)


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ('>>> import subprocess; p = subprocess.Popen(["sleep", "300"])', 0),
        (
            '>>> import subprocess; p = subprocess.Popen(["sleep", "300"])\n'
            ">>> import time; time.sleep(3600)",
            1,  # killed at its timeout
        ),
    ],
    ids=["passes", "times-out"],
)
def test_children_of_doctest_examples_do_not_outlive_the_runner(
    tmp_path, mlsmoke, monkeypatch, source, code
):
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.mlsmoke.doctest]\ntimeout = 2\n")
    (root / "spawns.py").write_text(f'"""\n{source}\n"""\n')
    outcome = mlsmoke("doctest", "spawns.py", cwd=root)
    assert outcome.code == code, outcome.output
    assert_clean(outcome)
