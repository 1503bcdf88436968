"""The template's regression suites, generated for real: train.py trains a checkpoint
that holds the shipped suites (through ``mlsmoke suites check`` and the project's own
pytest test), and a checkpoint that never predicts one arm is blocked by both, its
slice named and its flipped points listed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from baking import Bake

BIN = Path(sys.executable).parent
SUPPRESS_ARM_1 = """\
import sys, torch
checkpoint = torch.load(sys.argv[1], weights_only=True)
checkpoint["model"]["head.bias"][1] -= 20.0  # arm 1 is never predicted
torch.save(checkpoint, sys.argv[2])
"""


def run(project: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "OMP_NUM_THREADS": "1",
           "MLSMOKE_PYTHON": sys.executable, "MLSMOKE_WORKER": "0"}  # fmt: skip
    return subprocess.run(command, cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def test_trained_checkpoint_holds_the_shipped_suites_and_a_regression_fails(
    bake: Bake,
) -> None:
    project = bake()
    shipped = sorted(path.name for path in (project / "suites").iterdir())
    assert shipped == ["hard.json", "slice-arm-0.json", "slice-arm-1.json",
                       "slice-arm-2.json", "whole-set.json", "wrong.json"]  # fmt: skip
    trained = run(project, sys.executable, "train.py")
    assert trained.returncode == 0, trained.stderr

    held = run(project, str(BIN / "mlsmoke"), "suites", "check")
    assert held.returncode == 0, held.stdout + held.stderr
    assert held.stdout.startswith("suites check held: checkpoint.pt: 512 examples")
    test = run(project, sys.executable, "-m", "pytest", "-q", "-p",
               "no:cacheprovider", "tests/test_suites.py")  # fmt: skip
    assert test.returncode == 0 and "1 passed" in test.stdout, test.stdout

    suppressed = run(project, sys.executable, "-c", SUPPRESS_ARM_1, "checkpoint.pt",
                     "checkpoint.pt")  # fmt: skip
    assert suppressed.returncode == 0, suppressed.stderr
    blocked = run(project, str(BIN / "mlsmoke"), "suites", "check")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "slice-arm-1" in blocked.stdout and "REGRESSED" in blocked.stdout
    assert "flipped from right to wrong" in blocked.stdout
    failed = run(project, sys.executable, "-m", "pytest", "-q", "-p",
                 "no:cacheprovider", "tests/test_suites.py")  # fmt: skip
    assert failed.returncode == 1, failed.stdout
    assert "slice-arm-1" in failed.stdout and "REGRESSED" in failed.stdout
