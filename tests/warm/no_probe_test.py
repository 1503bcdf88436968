"""A hook whose project interpreter has a listening worker starts no interpreter to
find out whether it imports torch: the worker's being there says so. Real CLI runs,
through an interpreter that writes down each start."""

from __future__ import annotations

import sys
from pathlib import Path

from .warmkit import WarmProject

PROBE_MARK = "find_spec"  # in the probe's code (interpreter._PROBE), in no job's


def _logging_interpreter(project: WarmProject) -> Path:
    log = project.root.parent / "starts.log"
    wrapper = project.root.parent / "logging-python"
    wrapper.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n'
    )
    wrapper.chmod(0o755)
    pyproject = project.root / "pyproject.toml"
    lines = pyproject.read_text().splitlines()
    pyproject.write_text(
        "\n".join(
            f'python = "{wrapper}"' if line.startswith("python = ") else line
            for line in lines
        )
        + "\n"
    )
    return log


def _probes(log: Path) -> int:
    return log.read_text().count(PROBE_MARK) if log.exists() else 0


def test_the_gate_again_probes_nothing_while_its_worker_listens(
    project: WarmProject,
):
    log = _logging_interpreter(project)
    first = project.overfit()
    assert first.code == 0, first.output
    assert _probes(log) == 1  # no worker yet: the probe chose the interpreter
    (worker,) = project.warm_pids()
    again = project.overfit()
    assert again.code == 0 and "PASS" in again.stdout, again.output
    assert _probes(log) == 1
    assert [entry["ppid"] for entry in project.seen()] == [worker, worker]


def test_without_a_worker_the_gate_probes_as_before(project: WarmProject):
    log = _logging_interpreter(project)
    for _ in range(2):
        outcome = project.overfit(env={"MLSMOKE_WORKER": "0"})
        assert outcome.code == 0, outcome.output
    assert _probes(log) == 2
    assert not project.warm_pids()
