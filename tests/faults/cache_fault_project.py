"""A small gate project for the cache and config faults, run through ``faultkit``'s
real CLI: the checks every fault test makes (no mlsmoke traceback, no process and no
temporary file left behind) plus the cache's own (no half-written entry left)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from .faultkit import Outcome, assert_clean, run_cli

MODELS = Path(__file__).resolve().parents[1] / "overfit" / "overfit_models.py"
GATE = """
[tool.mlsmoke.overfit]
model = "overfit_models:MLP"
batch = "overfit_models:mlp_batch"
loss = "overfit_models:mlp_loss"
"""
LIMIT = 300.0  # seconds; a gate of this MLP takes a few on a loaded machine


def make_project(root: Path, extra: str = "", watch: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(MODELS, root)
    lines = [GATE.strip()] + ([f"watch = {watch}"] if watch is not None else [])
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n" + extra)
    return root


def run(root: Path, *args: str) -> Outcome:
    """``mlsmoke ARGS`` in ``root``, checked clean."""
    scratch = root.parent / f"scratch-{uuid.uuid4().hex}"
    outcome = run_cli(
        args, root, scratch, limit=LIMIT, env={"MLSMOKE_PYTHON": sys.executable}
    )
    assert_clean(outcome)
    assert leftovers(root) == [], "a half-written cache entry was left behind"
    return outcome


def run_together(root: Path, count: int, *args: str) -> list[Outcome]:
    """``count`` runs of ``mlsmoke ARGS`` in ``root`` at once."""
    outcomes: list[Outcome | None] = [None] * count

    def one(index: int) -> None:
        outcomes[index] = run_cli(
            args,
            root,
            root.parent / f"scratch-{uuid.uuid4().hex}",
            limit=LIMIT,
            env={"MLSMOKE_PYTHON": sys.executable},
        )

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for outcome in outcomes:
        assert outcome is not None
        assert_clean(outcome)
    return outcomes  # type: ignore[return-value]


def leftovers(root: Path) -> list[str]:
    """Temporary files of interrupted cache writes."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*.partial"))


def cache_entries(root: Path) -> list[Path]:
    directory = root / ".mlsmoke" / "overfit"
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def mount_tmpfs(target: Path, options: str) -> bool:
    """Mount a tmpfs on ``target`` (root only); whether it worked."""
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    completed = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
        capture_output=True,
    )
    return completed.returncode == 0


def unmount(target: Path) -> None:
    subprocess.run(["umount", str(target)], capture_output=True)
