"""``mlsmoke worker start`` (the warm-worker hook) and what the worker imports while
it waits: real CLI runs, real workers."""

from __future__ import annotations

import time
from pathlib import Path

from .warmkit import WarmProject, wait_until, warm_project

STARTUP = 60.0  # seconds a loaded machine may take to import torch


def test_start_returns_and_the_next_hook_uses_the_worker_it_started(
    project: WarmProject,
):
    outcome = project.start_worker()
    assert outcome.code == 0 and outcome.output == "", outcome.output
    assert wait_until(project.warm_pids, limit=STARTUP)
    (started,) = project.warm_pids()
    assert project.overfit().code == 0
    assert project.seen()[0]["ppid"] == started
    assert project.warm_pids() == [started]
    assert wait_until(lambda: not project.others(), limit=STARTUP)


def test_start_twice_starts_one_worker(project: WarmProject):
    assert project.start_worker().code == 0
    assert project.start_worker().code == 0
    assert wait_until(project.warm_pids, limit=STARTUP)
    assert wait_until(lambda: not project.others(), limit=STARTUP)
    assert len(project.warm_pids()) == 1


def test_start_does_nothing_when_the_worker_is_off(project: WarmProject):
    outcome = project.run("worker", "start", env={"MLSMOKE_WORKER": "0"})
    assert outcome.code == 0 and outcome.output == ""
    time.sleep(1.0)
    assert not project.warm_pids() and not project.others()


def test_start_is_silent_where_no_interpreter_imports_torch(tmp_path: Path):
    project = warm_project(tmp_path)
    pyproject = project.root / "pyproject.toml"
    without_torch = tmp_path / "no-torch-python"
    without_torch.write_text("#!/bin/sh\nexit 1\n")
    without_torch.chmod(0o755)
    text = pyproject.read_text().splitlines()
    pyproject.write_text(
        "\n".join(
            f'python = "{without_torch}"' if line.startswith("python = ") else line
            for line in text
        )
        + "\n"
    )
    outcome = project.start_worker()
    assert outcome.code == 0 and outcome.output == ""
    assert wait_until(lambda: not project.others(), limit=STARTUP)
    assert not project.warm_pids()


def test_a_job_after_a_pause_finds_what_a_first_optimizer_imports(
    project: WarmProject,
):
    assert project.overfit().code == 0
    time.sleep(0.5)  # idle: the worker imports torch._dynamo and mlsmoke's modules
    assert project.overfit().code == 0
    first, second = project.seen()
    assert second["ppid"] == first["ppid"]
    assert second["dynamo"], "the model was built before any optimizer"
