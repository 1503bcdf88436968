"""A project with suites in a temporary directory, and ``mlsmoke suites`` run on it
as a user runs it: the console script, in a process of its own.

A module of its own, not conftest.py: an import by that name finds whichever test
directory's conftest was collected first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

import suites_project

HERE = Path(__file__).parent
MLSMOKE = Path(sys.executable).parent / "mlsmoke"
CONFIG = {
    "classifier": """\
[tool.mlsmoke.suites]
model = "suites_project:classifier"
dataset = "suites_project:blobs"
slice = "suites_project:class_slice"
checkpoint = "checkpoints/model.pt"
hard = {hard}
device = "cpu"
{extra}
""",
    "tokens": """\
[tool.mlsmoke.suites]
model = "suites_project:token_model"
dataset = "suites_project:tokens"
slice = "suites_project:topic_slice"
checkpoint = "checkpoints/model.pt"
hard = {hard}
device = "cpu"
{extra}
""",
}
BUILD = {"classifier": "classifier", "tokens": "token_model"}
DATA = {"classifier": "blobs.pt", "tokens": "tokens.pt"}
MAKE = {"classifier": suites_project.make_blobs, "tokens": suites_project.make_tokens}


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str
    json: dict[str, Any]


@dataclass
class Project:
    root: Path
    kind: str

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoints" / "model.pt"

    @property
    def data(self) -> Path:
        return self.root / DATA[self.kind]

    def train(self, steps: int, out: Path | None = None, start: Path | None = None,
              seed: int = 0) -> Path:  # fmt: skip
        training = MAKE[self.kind](2000, seed=99)  # not the evaluation set
        return suites_project.train(
            BUILD[self.kind], training, steps, out or self.checkpoint, start, seed
        )

    def suite(self, name: str) -> dict[str, Any]:
        """The suite file's data, each example as a mapping of its columns."""
        data = json.loads((self.root / "suites" / f"{name}.json").read_text())
        data["examples"] = [dict(zip(data["columns"], row)) for row in data["examples"]]
        return data


def make_project(
    root: Path, kind: str = "classifier", size: int = 1000, hard: int = 50,
    extra: str = "",
) -> Project:  # fmt: skip
    root.mkdir(exist_ok=True)
    (root / "checkpoints").mkdir(exist_ok=True)
    shutil.copy(HERE / "suites_project.py", root)
    (root / "pyproject.toml").write_text(CONFIG[kind].format(hard=hard, extra=extra))
    torch.save(MAKE[kind](size, seed=7), root / DATA[kind])
    return Project(root, kind)


def run_suites(root: Path, *args: str, **env: str) -> Ran:
    report = root / "suites-report.json"
    report.unlink(missing_ok=True)
    done = subprocess.run(
        [str(MLSMOKE), "suites", *args, "--json", str(report)],
        cwd=root,
        env={**os.environ, "MLSMOKE_PYTHON": sys.executable, "OMP_NUM_THREADS": "1",
             **env},
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    data = json.loads(report.read_text()) if report.exists() else {}
    return Ran(done.returncode, done.stdout, done.stderr, data)
