"""Time to a passing gate: from a repository that has never seen mlsmoke to an
``overfit-batch`` hook that is on because it passed, typing what a user types.

Two repositories, built file by file (tests/init/script_repo.py):

- nanoGPT-shaped: a config-dataclass GPT with ``configure_optimizers``, a ``train.py``
  that trains on import, a configurator that reads ``sys.argv``. ``mlsmoke init``
  writes mlsmoke_gate.py (the GPT at a tiny size, a token batch, the model's own
  optimizer), runs the gate, and turns it on.
- sdist-like library: every class takes required arguments. ``mlsmoke init`` writes
  mlsmoke_gate.py with TODOs and keeps the gate off; the user finishes the factories
  (the lines they write are counted) and runs ``mlsmoke init`` again, which turns it on.

The seconds are mlsmoke's (init measures every tool, and runs the gate once), not the
user's typing.
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
from tests.init.script_repo import write_library_repo, write_script_repo

PROJECT_ENV = {"MLSMOKE_PYTHON": sys.executable}
FINISHED_LIBRARY_GATE = '''\
"""The gate's factories."""

import torch

from tiny_transformers import TransformerWrapper


def model():
    """A tiny TransformerWrapper."""
    return TransformerWrapper(num_tokens=32, max_seq_len=8, dim=16, depth=1)


def batch():
    """Tokens and next tokens."""
    tokens = torch.randint(0, 32, (4, 9), generator=torch.Generator().manual_seed(0))
    return tokens[:, :-1], tokens[:, 1:]


def loss(model, batch):
    """Next-token cross-entropy."""
    inputs, targets = batch
    logits = model(inputs)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
'''


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
    (repo / "mlsmoke_gate.py").write_text(FINISHED_LIBRARY_GATE)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'loss = "mlsmoke_gate:loss"\n')
    written = len([line for line in FINISHED_LIBRARY_GATE.splitlines() if line]) + 1
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
        rows=[nanogpt_row(), library_row()],
        notes=[
            "mlsmoke s: wall time of the init runs, each measuring every tool's debt "
            "and running the gate once (commit tier, CPU); the gate is on only after "
            "a run that passed",
        ],
    )
