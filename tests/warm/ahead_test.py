"""The gate run ahead by the warm-worker hook, through real pre-commit: the
overfit-batch hook of the same run takes its result, and only then."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from faults.faultkit import TAG_VARIABLE

from .warmkit import WarmProject, wait_until

MLSMOKE = f"{sys.executable} -m mlsmoke"
STARTUP = 60.0


def after_warm_worker(between_id: str, between: str, hooks: str) -> str:
    """A config of ``repo: local`` hooks running this checkout's mlsmoke: warm-worker
    first, then ``between`` (a hook that takes a moment, or a fixer), then
    ``hooks``."""
    return f"""repos:
  - repo: local
    hooks:
      - id: warm-worker
        name: warm-worker
        entry: {MLSMOKE} worker start
        language: system
        pass_filenames: false
        types: [python]
      - id: {between_id}
        name: {between_id}
        entry: {between}
        language: system
        pass_filenames: false
{hooks}"""


def _config(overfit_args: str = "", between: str = "") -> str:
    """warm-worker first, a hook that takes a moment, then overfit-batch."""
    sleep = f'{sys.executable} -c "import time; time.sleep({between or 0.5})"'
    return after_warm_worker(
        "slow-linter",
        sleep,
        f"""      - id: overfit-batch
        name: overfit-batch
        entry: {MLSMOKE} overfit {overfit_args}
        language: system
        pass_filenames: false
        types: [python]
""",
    )


def _pre_commit(project: WarmProject, config: str, **env: str):
    (project.root / ".pre-commit-config.yaml").write_text(config)
    if not (project.root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
    environ = {**os.environ, **project.env, TAG_VARIABLE: project.tag, **env}
    environ.pop("PRE_COMMIT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"],
        cwd=project.root,
        env=environ,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _gate_runs(project: WarmProject) -> int:
    return sum(1 for entry in project.seen() if entry["what"] == "overfit")


def test_overfit_batch_takes_the_pass_of_the_gate_run_ahead(project: WarmProject):
    run = _pre_commit(project, _config())
    assert run.returncode == 0, run.stdout + run.stderr
    assert "overfit smoke: PASS memorized ·" in run.stdout  # taken, not "(cached)"
    assert _gate_runs(project) == 1  # trained once, ahead
    assert project.warm_pids()


def test_a_failing_gate_run_ahead_blocks_with_its_verdict(project: WarmProject):
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("lr = 0.5", "lr = 1e-9"))
    run = _pre_commit(project, _config())
    assert run.returncode == 1
    assert "overfit smoke: FAIL" in run.stdout, run.stdout
    assert _gate_runs(project) == 1


def test_a_hook_with_other_arguments_trains_itself(project: WarmProject):
    run = _pre_commit(project, _config(overfit_args="--no-cache"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "overfit smoke: PASS" in run.stdout
    assert wait_until(lambda: _gate_runs(project) == 2, limit=STARTUP)


def test_nothing_runs_ahead_when_overfit_batch_is_skipped(project: WarmProject):
    run = _pre_commit(project, _config(), SKIP="overfit-batch")
    assert run.returncode == 0, run.stdout + run.stderr
    assert wait_until(project.warm_pids, limit=STARTUP)
    assert wait_until(lambda: not project.others(), limit=STARTUP)
    assert _gate_runs(project) == 0


def test_a_result_is_taken_once_and_not_by_the_next_run(project: WarmProject):
    assert _pre_commit(project, _config()).returncode == 0
    alone = _config().replace("      - id: warm-worker", "      - id: warm-off")
    alone = alone.replace("worker start", "worker status")
    run = _pre_commit(project, alone)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "overfit smoke: PASS" in run.stdout
    ran = _gate_runs(project)
    assert ran == 1 and "cached" in run.stdout.lower(), run.stdout


def test_the_result_dir_is_ignored_by_git(project: WarmProject, tmp_path: Path):
    assert _pre_commit(project, _config()).returncode == 0
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".mlsmoke" not in status.stdout
