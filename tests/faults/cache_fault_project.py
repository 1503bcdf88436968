"""A small gate project and the real ``mlsmoke`` CLI in a subprocess, with the checks
every cache and config fault test makes: no mlsmoke traceback, no process left behind
(found by a marker in the environment, so orphans count too), no temporary file left.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import mlsmoke

MODELS = Path(__file__).resolve().parents[1] / "overfit" / "overfit_models.py"
PACKAGE_DIR = Path(mlsmoke.__file__).resolve().parent
MARKER = "MLSMOKE_FAULT_TEST"
GATE = """
[tool.mlsmoke.overfit]
model = "overfit_models:MLP"
batch = "overfit_models:mlp_batch"
loss = "overfit_models:mlp_loss"
"""


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def make_project(root: Path, extra: str = "", watch: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(MODELS, root)
    lines = [GATE.strip()]
    if watch is not None:
        lines.append(f"watch = {watch}")
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n" + extra)
    return root


def start(root: Path, *args: str) -> tuple[subprocess.Popen, str]:
    """``mlsmoke ARGS`` started in ``root``; returns it and its marker."""
    marker = uuid.uuid4().hex
    env = {**os.environ, MARKER: marker, "MLSMOKE_PYTHON": sys.executable}
    process = subprocess.Popen(
        [sys.executable, "-m", "mlsmoke", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, marker


def finish(process: subprocess.Popen, marker: str, timeout: float = 300) -> Outcome:
    out, err = process.communicate(timeout=timeout)
    outcome = Outcome(process.returncode, out, err)
    assert_no_traceback(outcome)
    assert processes_with(marker) == [], "a process outlived mlsmoke"
    return outcome


def run(root: Path, *args: str) -> Outcome:
    return finish(*start(root, *args))


def assert_no_traceback(outcome: Outcome) -> None:
    """No crash of mlsmoke's own (the project's traceback in a verdict is fine)."""
    assert "Traceback" not in outcome.err, outcome.err
    assert f'File "{PACKAGE_DIR}' not in outcome.text, outcome.text


def processes_with(marker: str) -> list[int]:
    """Running processes whose environment holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"{MARKER}={marker}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def leftovers(root: Path) -> list[str]:
    """Temporary files of interrupted writes in the project."""
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
