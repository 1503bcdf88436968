"""Time to a passing gate: from a repository that has never seen mlsmoke to an
``overfit-batch`` hook that is on because it passed, typing what a user types.

Two repositories, built file by file (tests/init/script_repo.py):

- nanoGPT-shaped: a config-dataclass GPT with ``configure_optimizers``, a ``train.py``
  that trains on import, a configurator that reads ``sys.argv``. ``mlsmoke init``
  configures script mode (``train.py`` with the args of a tiny run, pinned to its
  ``get_batch``), runs the gate, calibrates max-steps from three seeds, and turns it
  on.
- sdist-like library: every class takes required arguments. ``mlsmoke init`` writes
  mlsmoke_gate.py with TODOs and keeps the gate off; the user finishes the factories
  (the lines they write are counted) and runs ``mlsmoke init`` again, which turns it on.

``--quick``: the nanoGPT-shaped repository only. The seconds are mlsmoke's (init
measures every tool, runs the gate once and twice more to calibrate), not the user's
typing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from benchmarks.precommit import commit_all, init_git_repo, scratch_dir
from benchmarks.report import Section
from tests.init.script_repo import (
    finish_library_gate,
    write_library_repo,
    write_script_repo,
)

PROJECT_ENV = {"MLSMOKE_PYTHON": sys.executable}


def init(repo: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mlsmoke", "init"],
        cwd=repo,
        env={**os.environ, **PROJECT_ENV},
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start


def gate_on(repo: Path) -> bool:
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text("utf-8"))
    return any(
        hook["id"] == "overfit-batch" for r in config["repos"] for hook in r["hooks"]
    )


def nanogpt_row() -> list[object]:
    repo = write_script_repo(scratch_dir() / "adopt" / "nanogpt")
    init_git_repo(repo)
    commit_all(repo, "nanoGPT-shaped")
    seconds = init(repo)
    return ["nanoGPT-shaped", "`mlsmoke init`", 0, f"{seconds:.1f}", _on(repo)]


def library_row() -> list[object]:
    repo = write_library_repo(scratch_dir() / "adopt" / "library")
    init_git_repo(repo)
    commit_all(repo, "library")
    first = init(repo)
    off = not gate_on(repo)
    written = finish_library_gate(repo)
    second = init(repo)
    commands = "`mlsmoke init`, finish mlsmoke_gate.py, `mlsmoke init`"
    on = _on(repo) + ("" if off else " (on after the first init: WRONG)")
    return ["sdist-like library", commands, written, f"{first + second:.1f}", on]


def _on(repo: Path) -> str:
    return "yes" if gate_on(repo) else "NO"


def run(quick: bool) -> Section:
    return Section(
        title="init: time to a passing gate",
        columns=[
            "repository",
            "what the user types",
            "lines the user writes",
            "mlsmoke s",
            "gate on",
        ],
        rows=[nanogpt_row()] if quick else [nanogpt_row(), library_row()],
        notes=[
            "mlsmoke s: wall time of the init runs, each measuring every tool's debt "
            "and running the gate once (commit tier, CPU); the gate is on only after "
            "a run that passed",
        ],
    )
