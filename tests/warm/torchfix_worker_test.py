"""The torchfix hook and the warm worker, through real pre-commit: a ready worker
whose interpreter has the hook's flake8 and TorchFix runs the check; without one the
hook runs it itself, starting no worker; the findings are the same either way."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from .warmkit import WarmProject, ready_worker, run_pre_commit

CONFIG = f"""repos:
  - repo: local
    hooks:
      - id: torchfix
        name: torchfix
        entry: {sys.executable} -m mlsmoke torchfix
        language: system
        types: [python]
"""
FLAKE8 = "[flake8]\nextend-select = TOR0,TOR1,TOR2,TOR4\n"
LOADS = textwrap.dedent("""
    import torch


    def load(path):
        return torch.load(path)
    """)


def _commit_check(project: WarmProject, **env: str) -> subprocess.CompletedProcess:
    (project.root / ".flake8").write_text(FLAKE8)
    (project.root / "loads.py").write_text(LOADS)
    return run_pre_commit(project, CONFIG, **env)


def _jobs_run(project: WarmProject) -> int:
    status = project.worker("status", "--project", str(project.root))
    return int(status.split(" job(s) run")[0].rsplit(" ", 1)[1])


def _findings(run: subprocess.CompletedProcess) -> list[str]:
    return [line for line in run.stdout.splitlines() if ": TOR" in line]


def test_a_ready_worker_runs_the_check(project: WarmProject):
    ready_worker(project)
    before = _jobs_run(project)
    warm = _commit_check(project)
    assert warm.returncode == 1, warm.stdout + warm.stderr
    assert _jobs_run(project) == before + 1
    cold = _commit_check(project, MLSMOKE_WORKER="0")
    assert cold.returncode == 1
    assert _jobs_run(project) == before + 1
    assert _findings(warm) == _findings(cold)
    (finding,) = _findings(warm)
    assert finding.startswith("loads.py:6:") and "TOR102" in finding


def test_without_a_worker_the_hook_checks_alone_and_starts_none(
    project: WarmProject,
):
    run = _commit_check(project)
    assert run.returncode == 1 and "TOR102" in run.stdout, run.stdout + run.stderr
    assert not project.warm_pids()
