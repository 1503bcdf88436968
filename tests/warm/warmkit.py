"""A tiny project whose code writes down what it sees, run through the real CLI with
the warm worker on (its sockets in a directory of the test's own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faults.faultkit import (
    TAG_VARIABLE,
    Outcome,
    run_cli,
    tagged_processes,
    warm_workers,
)

SEEN_VARIABLE = "MLSMOKE_TEST_SEEN"

APP = textwrap.dedent('''
    """A model that memorizes its batch, and writes down what it saw.

    >>> import app
    >>> app.record("doctest")
    """
    import json
    import os
    import random
    import sys

    import numpy
    import torch

    VALUE = 1
    _RECORDED = []


    def record(what):
        if _RECORDED:  # the gate builds the model more than once
            return
        _RECORDED.append(what)
        entry = {
            "what": what,
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "pgid": os.getpgid(0),
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "path": sys.path,
            "main": sorted(k for k in vars(sys.modules["__main__"]) if k[:2] != "__"),
            "torch_seed": torch.initial_seed(),
            "torch_first": torch.rand(1).item(),
            "random": random.random(),
            "numpy": float(numpy.random.random()),
            "cuda": torch.cuda.is_initialized(),
            "token": os.environ.get("MLSMOKE_RUN"),
            "leaked": os.environ.get("LEAKED_BY_A_JOB"),
            "value": VALUE,
            "dynamo": "torch._dynamo" in sys.modules,
        }
        with open(os.environ["MLSMOKE_TEST_SEEN"], "a") as file:
            file.write(json.dumps(entry) + "\\n")


    def model():
        record("overfit")
        return torch.nn.Linear(4, 3)


    def batch():
        generator = torch.Generator().manual_seed(0)
        return torch.randn(8, 4, generator=generator), torch.arange(8) % 3


    def loss(model, batch):
        inputs, labels = batch
        return torch.nn.functional.cross_entropy(model(inputs), labels)
    ''')


@dataclass
class WarmProject:
    root: Path
    scratch: Path
    workers: Path  # MLSMOKE_WORKER_DIR
    env: dict[str, str] = field(default_factory=dict)
    tag: str = field(default_factory=lambda: uuid.uuid4().hex)

    def run(self, *args: str, **options: Any) -> Outcome:
        env = {**self.env, **options.pop("env", {})}
        return run_cli(args, self.root, self.scratch, env=env, tag=self.tag, **options)

    def start_worker(self, limit: float = 60.0, **options: Any) -> Outcome:
        """``mlsmoke worker start``, its starter left ``limit`` seconds to bring the
        worker up (a loaded machine takes that long to import torch) before the
        leftovers are killed."""
        return self.run("worker", "start", settle_seconds=limit, **options)

    def overfit(self, **options: Any) -> Outcome:
        return self.run("overfit", "--no-cache", **options)

    def doctest(self, **options: Any) -> Outcome:
        # --no-cache: every call is a job for the worker, not a cached pass
        return self.run("doctest", "--no-cache", "app.py", **options)

    def seen(self) -> list[dict[str, Any]]:
        path = Path(self.env[SEEN_VARIABLE])
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def worker(self, *args: str) -> str:
        completed = subprocess.run(
            [sys.executable, "-m", "mlsmoke", "worker", *args],
            cwd=self.root,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            check=True,
        )
        return completed.stdout

    def warm_pids(self) -> list[int]:
        return sorted(warm_workers(self.tag))

    def others(self) -> dict[int, str]:
        """Every process of this project's runs still there, but the warm workers."""
        return tagged_processes(self.tag)


def warm_project(tmp_path: Path, extra: str = "", idle: float = 60) -> WarmProject:
    root = tmp_path / "project"
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\ndependencies = ["numpy", "torch"]\n\n'
        f'[tool.mlsmoke]\npython = "{sys.executable}"\n\n'
        "[tool.mlsmoke.overfit.smoke]\n"
        'model = "app:model"\nbatch = "app:batch"\nloss = "app:loss"\nlr = 0.5\n'
        f"timeout = 20\n{extra}"
    )
    workers = tmp_path / "workers"
    env = {
        "MLSMOKE_WORKER": "1",
        "MLSMOKE_WORKER_DIR": str(workers),
        "MLSMOKE_WORKER_IDLE": str(idle),
        SEEN_VARIABLE: str(tmp_path / "seen.jsonl"),
    }
    return WarmProject(root, tmp_path / "scratch", workers, env)


def wait_until(condition, limit: float = 10.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def ready_worker(project: WarmProject, limit: float = 60.0) -> int:
    """The project's worker, started and done with what its callers' jobs import
    on first use; ``limit``: seconds a loaded machine may take to import torch."""
    assert project.start_worker(limit).code == 0
    assert wait_until(project.warm_pids, limit=limit)
    (worker,) = project.warm_pids()

    def listening(status: str) -> bool:
        return f"worker {worker}:" in status

    assert wait_until(lambda: listening(project.worker("status")), limit)
    time.sleep(0.2)  # the imports begin once the worker is idle for 0.1 s
    assert wait_until(lambda: "importing" not in project.worker("status"), limit)
    assert listening(project.worker("status"))
    return worker


def run_pre_commit(
    project: WarmProject, config: str, **env: str
) -> subprocess.CompletedProcess:
    """``pre-commit run --all-files`` in the project with ``config``, every file
    added to git, the worker's settings and the test's tag in the environment."""
    (project.root / ".pre-commit-config.yaml").write_text(config)
    if not (project.root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
    environ = {**os.environ, **project.env, TAG_VARIABLE: project.tag, **env}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=project.root,
        env=environ,
        capture_output=True,
        text=True,
        timeout=240,
    )
