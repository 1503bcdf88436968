"""mlsmoke expect reads the batches in a job of the warm worker, as the gate does."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from .warmkit import warm_project

EXPECT_BATCH = """

def expect_batch():
    record("expect")
    return batch()
"""


def test_expect_runs_as_jobs_of_the_warm_worker(tmp_path: Path):
    project = warm_project(
        tmp_path, extra='\n[tool.mlsmoke.expect]\nbatch = "app:expect_batch"\n'
    )
    try:
        with (project.root / "app.py").open("a") as app:
            app.write(EXPECT_BATCH)
        recorded = project.run("expect", "--record")
        assert recorded.code == 0, recorded.output
        checked = project.run("expect", "--no-cache")
        assert checked.code == 0, checked.output
        assert "PASS" in checked.output
        (worker,) = project.warm_pids()
        seen = project.seen()
        assert [entry["what"] for entry in seen] == ["expect", "expect"]
        assert {entry["ppid"] for entry in seen} == {worker}
    finally:
        for pid in project.warm_pids():
            os.kill(pid, signal.SIGKILL)
