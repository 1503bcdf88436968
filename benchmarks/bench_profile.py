"""``mlsmoke profile``: what profiling costs, and how close the data share it reports
comes to a known one.

- Overhead: steps/s without the profiler against steps/s under it, both measured by
  one ``mlsmoke profile`` run on the same model and loader, one after the other.
- Accuracy: a loader whose samples sleep a known time and a model whose forward
  sleeps a known time make the data's share of a step known in advance; the error is
  the reported share less the known one, in points (target: within 10).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.measure import run_process
from benchmarks.report import Section

WORKLOAD = Path(__file__).resolve().parent / "profile_workload.py"
MLSMOKE = Path(sys.executable).parent / "mlsmoke"
MODELS = {"MLP": "mlp", "CNN": "cnn"}
# The data share -> (seconds per sample, one a batch; seconds per forward).
SLEEPS = {0.25: (0.01, 0.03), 0.5: (0.02, 0.02), 0.75: (0.03, 0.01)}
SHARE_TARGET = 0.10


def run(quick: bool) -> Section:
    repeats = 1 if quick else 3
    steps = "10" if quick else "30"
    rows: list[list[object]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-profile-") as tmp:
        root = Path(tmp)
        for label, factory in MODELS.items():
            project = _project(root / factory, factory, "loader")
            figures = [_profile(project, steps) for _ in range(repeats)]
            plain = statistics.median(f["steps_per_second"] for f in figures)
            profiled = statistics.median(
                f["profiled_steps_per_second"] for f in figures
            )
            rows.append([f"overhead, {label}", f"{plain:.1f} steps/s",
                         f"{profiled:.1f} steps/s", f"{plain / profiled:.2f}x",
                         "context"])  # fmt: skip
        project = _project(root / "sleeper", "Sleeper", "sleepy_loader")
        errors = []
        for known, (item, forward) in SLEEPS.items():
            env = {"ITEM_SLEEP": str(item), "FORWARD_SLEEP": str(forward)}
            shares = [
                _profile(project, steps, env)["shares"]["data_wait"]
                for _ in range(repeats)
            ]
            reported = statistics.median(shares)
            error = reported - known
            errors.append(abs(error))
            rows.append([f"data share, known {known:.0%}", f"{known:.0%}",
                         f"{reported:.1%}", f"{100 * error:+.1f} points",
                         "ok" if abs(error) <= SHARE_TARGET else "MISSED"])  # fmt: skip
    notes.append(
        f"overhead: unprofiled / profiled steps/s of one run ({steps} steps each,"
        f" median of {repeats}), one CPU thread; the profiler records every op and"
        " its input shapes"
    )
    notes.append(
        f"largest data-share error {100 * max(errors):.1f} points"
        f" (target {100 * SHARE_TARGET:.0f})"
    )
    return Section(
        title="mlsmoke profile: overhead and data-share accuracy",
        columns=["measure", "reference", "profiled", "ratio / error", "target"],
        rows=rows,
        notes=notes,
    )


def _project(root: Path, model: str, batch: str) -> Path:
    root.mkdir(parents=True)
    shutil.copy(WORKLOAD, root)
    (root / "pyproject.toml").write_text(
        "[tool.mlsmoke.overfit]\n"
        f'model = "profile_workload:{model}"\n'
        f'batch = "profile_workload:{batch}"\n'
        'loss = "profile_workload:loss"\n'
        'device = "cpu"\n'
    )
    return root


def _profile(project: Path, steps: str, env: dict[str, str] | None = None) -> dict:
    report = project / "profile.json"
    command = [str(MLSMOKE), "profile", "--steps", steps, "--json", str(report),
               "--trace", str(project / "trace.json.gz")]  # fmt: skip
    environment = {
        **os.environ,
        "MLSMOKE_PYTHON": sys.executable,
        "OMP_NUM_THREADS": "1",  # on a busy machine, threads wait for each other
        **(env or {}),
    }
    run_process(command, cwd=project, env=environment).check(" ".join(command))
    return json.loads(report.read_text())[0]["figures"]
