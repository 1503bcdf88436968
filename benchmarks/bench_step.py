"""The gate with a project's step function against its own loop, on the same models.

Both train the gate benchmark's three CPU models (MLP, CNN, transformer LM) with the
built-in Adam on the same batch; the step function (``gate_workloads/step_project.py``)
is the textbook step the gate's own loop takes, so the difference is the cost of
calling the project's step and checking its invariants. Side by side in one warm
process (``gate_workloads/step_warm.py``), repeats interleaved. Target: at most 1.1x.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_gate import MODELS, WORKLOADS, _env, _verdict
from benchmarks.measure import ratio, run_process
from benchmarks.report import Section

TARGET = 1.1


def run(quick: bool) -> Section:
    repeats = 1 if quick else 7
    models = ["mlp"] if quick else list(MODELS)
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-step-") as tmp:
        project = Path(tmp)
        for source in WORKLOADS.glob("*.py"):
            (project / source.name).write_text(source.read_text())
        command = [sys.executable, "step_warm.py", str(repeats), *models]
        process = run_process(command, cwd=project, env=_env()).check("step_warm.py")
        timings = json.loads(process.stdout.strip().splitlines()[-1])
    rows = []
    for model in models:
        loop, step = timings[f"{model}-loop"], timings[f"{model}-step"]
        if loop["steps"] != step["steps"]:
            raise RuntimeError(f"{model}: the loop took {loop['steps']} steps and the"
                               f" step function {step['steps']}")  # fmt: skip
        rows.append([
            MODELS[model], int(loop["steps"]), *_pair(loop, step, "train"),
            *_pair(loop, step, "wall"), *_pair(loop, step, "cpu"),
            _verdict(step["cpu"] <= TARGET * loop["cpu"]),
        ])  # fmt: skip
    notes = [
        f"{'median of %d' % repeats if repeats > 1 else 'one run'} per way and model,"
        " interleaved in one warm process (imports and first-step costs paid before"
        " timing); OMP_NUM_THREADS=1; built-in Adam at the gate's default lr, CPU",
        "training s: the gate's training run (its --json seconds); gate s and CPU s:"
        " the whole gate, diagnosis and checks included; CPU time is steadier than"
        " wall time on a shared machine, and the target is read on it",
        "the step function's run calls it once more than the loop's forward-backward"
        " count: the loop stops on the loss before its last update, the step function"
        " has updated by the time it returns its loss",
    ]
    if quick:
        notes.append("--quick: the MLP, one run each (the full run: three models, 7)")
    return Section(
        title="Overfit gate with a project step function vs its own loop (same models)",
        columns=["model", "steps", "loop training s", "step training s (vs loop)",
                 "loop gate s", "step gate s (vs loop)", "loop CPU s",
                 "step CPU s (vs loop)", f"CPU within {TARGET}x"],
        rows=rows,
        notes=notes,
    )  # fmt: skip


def _pair(loop: dict, step: dict, key: str) -> list[str]:
    """The loop's seconds, and the step function's with its ratio to them."""
    return [f"{loop[key]:.3f}", f"{step[key]:.3f} ({ratio(step[key], loop[key])})"]
