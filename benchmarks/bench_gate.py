"""The gate against a bare hand-written loop and Lightning, on three CPU models.

Each runner trains the same model on the same batch for the same number of steps, in
its own fresh process: ``mlsmoke overfit`` runs to its target and fixes N, then the bare
loop (``gate_workloads/bare_loop.py``) and ``Trainer(overfit_batches=1, max_steps=N)``
(``gate_workloads/lightning_loop.py``) run N steps. Repeats are interleaved, so that
the machine's noise falls on all three alike, and the medians are compared.
Targets: mlsmoke at most 1.15x the bare loop, and faster than Lightning.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import ProcessRun, Summary, ratio, run_process
from benchmarks.report import Section

WORKLOADS = Path(__file__).resolve().parent / "gate_workloads"
MODELS = {"mlp": "MLP", "cnn": "CNN", "lm": "transformer LM"}
LR = 3e-3
GATE_TARGET = 1.15


@dataclass(frozen=True)
class GateOutcome:
    run: ProcessRun
    steps: int
    train_seconds: float
    target: float | None


def run(quick: bool) -> Section:
    models = ["mlp"] if quick else list(MODELS)
    repeats = 1 if quick else 4
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-gate-") as tmp:
        project = write_project(Path(tmp), models)
        imports = {
            code: Summary.of(
                [
                    _python(project, "-c", code).check(code)
                    for _ in range(1 if quick else 3)
                ]
            )
            for code in ("import torch", "import torch, torch._dynamo")
        }
        rows, notes = [], []
        for name in models:
            dynamo = (
                imports["import torch, torch._dynamo"].seconds
                - imports["import torch"].seconds
            )
            row, note = compare(project, name, repeats, dynamo, quick)
            rows.append(row)
            notes.append(note)
    notes[:0] = (
        (f"median of {repeats} fresh processes" if repeats > 1 else "one process")
        + " per cell, interleaved; peak RSS is the"
        " largest process of the run's tree (for mlsmoke, the worker in the project's"
        f" interpreter); Adam, lr {LR}, CPU, OMP_NUM_THREADS=1 for all three",
        _import_note(imports["import torch"], imports["import torch, torch._dynamo"]),
    )
    if quick:
        notes.append(
            "--quick: the MLP only, one run each, no warm-up (the full run adds the"
            " CNN and the LM, a warm-up run and 4 interleaved repeats)"
        )
    if not lightning_installed():
        notes.append("Lightning is not installed here: `make bench` installs it")
    return Section(
        title="Overfit gate vs a bare loop vs Lightning (wall time, peak memory)",
        columns=[
            "model",
            "steps",
            "bare loop s",
            "mlsmoke s",
            "Lightning s",
            "bare MiB",
            "mlsmoke MiB",
            "Lightning MiB",
            f"mlsmoke <= {GATE_TARGET}x bare",
            "mlsmoke < Lightning",
        ],
        rows=rows,
        notes=notes,
    )


def compare(
    project: Path, name: str, repeats: int, dynamo_seconds: float, quick: bool
) -> tuple[list[object], str]:
    """One table row for ``name``, and the breakdown of the gate's time.
    ``dynamo_seconds`` is what importing torch._dynamo costs the bare loop."""
    first = run_gate(project, name)  # fixes N; a warm-up, except in --quick
    steps = first.steps
    runners = {
        "gate": lambda: run_gate(project, name),
        "bare": lambda: _python(project, "bare_loop.py", name, str(steps), str(LR)),
        "lightning": lambda: _python(
            project, "lightning_loop.py", name, str(steps), str(LR)
        ),
    }
    if not lightning_installed():
        del runners["lightning"]
    results: dict[str, list] = {key: [] for key in runners}
    if quick:
        results["gate"].append(first)
        del runners["gate"]
    keys = list(runners)
    for repeat in range(repeats):
        shift = repeat % len(keys)
        for key in keys[shift:] + keys[:shift]:
            results[key].append(runners[key]())
    gate_outcomes: list[GateOutcome] = results.pop("gate")
    for outcome in gate_outcomes:
        if outcome.steps != steps:
            raise RuntimeError(f"{name}: the gate took {outcome.steps}, then {steps}")
    gate = Summary.of([outcome.run for outcome in gate_outcomes])
    bare_runs = [run.check(f"bare loop {name}") for run in results["bare"]]
    bare = Summary.of(bare_runs)
    light = None
    if "lightning" in results:
        light = Summary.of(
            [run.check(f"Lightning {name}") for run in results["lightning"]]
        )
    row = [
        MODELS[name],
        steps,
        f"{bare.seconds:.2f}",
        f"{gate.seconds:.2f} ({ratio(gate.seconds, bare.seconds)})",
        _cell(light.seconds if light else None, bare.seconds, "{:.2f}"),
        f"{bare.peak_rss_mib:.0f}",
        f"{gate.peak_rss_mib:.0f} ({ratio(gate.peak_rss_mib, bare.peak_rss_mib)})",
        _cell(light.peak_rss_mib if light else None, bare.peak_rss_mib, "{:.0f}"),
        _verdict(gate.seconds <= GATE_TARGET * bare.seconds),
        _verdict(gate.seconds < light.seconds) if light else "n/a",
    ]
    gate_loop = statistics.median(outcome.train_seconds for outcome in gate_outcomes)
    bare_loop = statistics.median(
        json.loads(run.stdout)["seconds"] for run in bare_runs
    )
    lean_bare = bare.seconds - dynamo_seconds
    note = (
        f"{MODELS[name]}: target loss {gate_outcomes[0].target:.3g} reached in"
        f" {steps} steps. mlsmoke {gate.seconds:.2f} s: {gate_loop:.2f} s in its"
        " training run (its --json seconds), the rest in its CLI, the interpreter"
        " probe, Python and torch start-up, and the checks (which run first and"
        f" warm torch up); bare loop {bare.seconds:.2f} s: {bare_loop:.2f} s from"
        " building the model to its last step, first calls included; without"
        f" torch._dynamo's import it would take about {lean_bare:.2f} s, and mlsmoke"
        f" {ratio(gate.seconds, lean_bare)} of that"
    )
    return row, note


def run_gate(project: Path, name: str) -> GateOutcome:
    report = project / f"gate-{name}.json"
    report.unlink(missing_ok=True)
    command = [*mlsmoke_command(), "overfit", "--gate", name, "--no-cache"]
    run = run_process([*command, "--json", str(report)], cwd=project, env=_env())
    run.check(f"mlsmoke overfit --gate {name}")
    (result,) = json.loads(report.read_text())
    if result["verdict"] != "pass":
        raise RuntimeError(f"the gate did not memorize {name}: {result['diagnosis']}")
    return GateOutcome(run, result["steps"], result["seconds"], result["target"])


def write_project(root: Path, models: list[str]) -> Path:
    """A project whose pyproject.toml declares one gate per model."""
    for source in WORKLOADS.glob("*.py"):
        shutil.copy2(source, root / source.name)
    lines = ["[tool.mlsmoke]", f"python = {json.dumps(sys.executable)}", ""]
    for name in models:
        lines += [
            f"[tool.mlsmoke.overfit.{name}]",
            f'model = "models:{name}"',
            f'batch = "models:{name}_batch"',
            'optimizer = "adam"',
            f"lr = {LR}",
            'device = "cpu"',
            "",
        ]
    (root / "pyproject.toml").write_text("\n".join(lines))
    return root


def mlsmoke_command() -> list[str]:
    """The console script a hook runs, from this interpreter's environment."""
    script = Path(sys.executable).parent / "mlsmoke"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlsmoke"]


def lightning_installed() -> bool:
    return importlib.util.find_spec("lightning") is not None


def _python(project: Path, *args: str) -> ProcessRun:
    return run_process([sys.executable, *args], cwd=project, env=_env())


def _env() -> dict[str, str]:
    # One thread for all three runners, the gate's own choice for small models (it
    # keeps OMP_NUM_THREADS when set): the ratios then measure work, not threading.
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}


def _cell(value: float | None, baseline: float, style: str) -> str:
    if value is None:
        return "not installed"
    return f"{style.format(value)} ({ratio(value, baseline)})"


def _import_note(torch: Summary, dynamo: Summary) -> str:
    return (
        f"`import torch` alone takes {torch.seconds:.2f} s and"
        f" {torch.peak_rss_mib:.0f} MiB; the first step of a torch.optim optimizer"
        f" imports torch._dynamo, {dynamo.seconds - torch.seconds:.2f} s and"
        f" {dynamo.peak_rss_mib - torch.peak_rss_mib:.0f} MiB more, which the bare"
        " loop and Lightning pay; the gate's built-in Adam applies the same update"
        " without torch.optim (tests/overfit/optimizers_test.py) and does not"
    )


def _verdict(met: bool) -> str:
    return "yes" if met else "**no**"
