"""Script mode through the warm worker: the script runs in a job forked from the
worker, as ``python train.py ARGS`` would run it, and not in the worker itself."""

from __future__ import annotations

from pathlib import Path

from .start_test import STARTUP
from .warmkit import wait_until, warm_project

TRAIN = """\
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

import app

app.record("script " + " ".join(sys.argv[1:]))
model = app.model()
optimizer = torch.optim.Adam(model.parameters(), lr=0.5)
loader = DataLoader(TensorDataset(*app.batch()), batch_size=8)
for epoch in range(1000):
    for inputs, labels in loader:
        loss = app.loss(model, (inputs, labels))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
GATE = '\n[tool.mlsmoke.overfit.trainer]\nscript = "train.py"\nargs = ["--tiny"]\n'


def test_a_script_gate_runs_in_a_job_forked_from_the_worker(tmp_path: Path):
    project = warm_project(tmp_path, extra=GATE)
    (project.root / "train.py").write_text(TRAIN)
    first = project.run("overfit", "--no-cache", "--gate", "trainer")
    assert first.code == 0, first.output
    assert wait_until(project.warm_pids, limit=STARTUP)
    (worker,) = project.warm_pids()
    again = project.run("overfit", "--no-cache", "--gate", "trainer")
    assert again.code == 0 and "PASS memorized" in again.output, again.output
    seen = project.seen()
    assert seen[-1]["what"] == "script --tiny"
    assert seen[-1]["ppid"] == worker and seen[-1]["pid"] != worker
    assert seen[-1]["main"] == []  # the script's globals stay its own
    assert project.warm_pids() == [worker]
