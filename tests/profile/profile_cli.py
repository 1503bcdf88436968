"""A profiled project in a temporary directory, and ``mlsmoke profile`` run on it as
a user runs it: the console script, in a process of its own.

A module of its own, not conftest.py: test directories each have a conftest, and an
import by that name finds whichever was collected first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
MLSMOKE = Path(sys.executable).parent / "mlsmoke"
GATE = """\
[tool.mlsmoke.overfit]
model = "profiled_project:model"
batch = "profiled_project:{batch}"
loss = "profiled_project:loss"
device = "cpu"
{extra}
"""


@dataclass
class Profiled:
    code: int
    stdout: str
    stderr: str
    json: list[dict[str, Any]]

    @property
    def outcome(self) -> dict[str, Any]:
        return self.json[0]

    @property
    def rules(self) -> list[str]:
        return [r["rule"] for r in self.outcome.get("recommendations", [])]


def make_project(root: Path, batch: str = "loader", extra: str = "") -> Path:
    root.mkdir(exist_ok=True)
    shutil.copy(HERE / "profiled_project.py", root)
    (root / "pyproject.toml").write_text(GATE.format(batch=batch, extra=extra))
    return root


def run_profile(root: Path, *args: str, one_cpu: bool = False, **env: str) -> Profiled:
    """``one_cpu``: the profile may use one CPU, so there is no other thread count
    to time (on a busy 2-CPU machine a tiny GPT's update takes seconds on 2)."""
    report = root / "profile.json"
    report.unlink(missing_ok=True)
    done = subprocess.run(
        [str(MLSMOKE), "profile", "--json", str(report), *args],
        cwd=root,
        env={
            **os.environ,
            "MLSMOKE_PYTHON": sys.executable,
            "OMP_NUM_THREADS": "1",  # the machine's other work, not threads, is noise
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_on_one_cpu if one_cpu else None,
    )
    data = json.loads(report.read_text()) if report.exists() else []
    return Profiled(done.returncode, done.stdout, done.stderr, data)


def _on_one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
