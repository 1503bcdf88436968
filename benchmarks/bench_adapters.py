"""The gate through its adapters, against the plain-factory gate on the same model.

Three gates train the same MLP with torch.optim.Adam at the same lr on the same first
batch: a plain factory with a batch function (``first_batch``, the glue users wrote
before the adapters), the model drawing from a DataLoader, and the model as a
LightningModule (``training_step``, ``configure_optimizers``). Each runs as
``mlsmoke overfit --gate NAME --no-cache`` in a fresh process, repeats interleaved.
Lightning's own import is measured apart and taken out of the LightningModule ratio:
a project that uses Lightning pays it whatever the gate does. Target: under 1.2x.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_gate import WORKLOADS, _env, _verdict, mlsmoke_command
from benchmarks.measure import Summary, ratio, run_process
from benchmarks.report import Section

GATES = {
    "plain": ("plain factory + batch function", "adapter_project:mlp",
              "adapter_project:first_batch", "adapter_project:adam"),
    "loader": ("DataLoader", "adapter_project:mlp", "adapter_project:train_loader",
               "adapter_project:adam"),
    "lightning": ("LightningModule + DataLoader", "adapter_project:lightning_mlp",
                  "adapter_project:train_loader", None),
}  # fmt: skip
TARGET = 1.2
BASE_IMPORT = "import torch, torch._dynamo"


def run(quick: bool) -> Section:
    repeats = 1 if quick else 5
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-adapters-") as tmp:
        project = write_project(Path(tmp))
        runs: dict[str, list] = {name: [] for name in GATES}
        if not quick:
            for name in GATES:
                run_gate(project, name)  # warm-up
        for repeat in range(repeats):
            names = list(GATES)
            shift = repeat % len(names)
            for name in names[shift:] + names[:shift]:
                runs[name].append(run_gate(project, name))
        lightning_import = import_cost(project, 1 if quick else 3)
        warm = warm_gates(project, 5 if quick else 20)
    rows = table(runs, lightning_import, warm)
    notes = [
        f"{'median of %d' % repeats if repeats > 1 else 'one'} fresh process(es) per"
        " gate, interleaved; OMP_NUM_THREADS=1; the MLP of the gate benchmark,"
        " torch.optim.Adam lr 3e-3 in all three, CPU",
        f"Lightning's own import (`{BASE_IMPORT}, lightning` minus `{BASE_IMPORT}`):"
        f" {lightning_import[0]:.2f} s wall, {lightning_import[1]:.2f} s CPU; the"
        " LightningModule row's wall and CPU seconds are net of it (a project that"
        " trains with Lightning pays it whatever the gate does)",
        "CPU s: user + system time of the whole run (hook and worker), steadier than"
        " wall time on a shared machine; training s: the gate's training run (its"
        " --json seconds), adapters included (drawing the batch, training_step,"
        " configure_optimizers); in the Lightning row it excludes torch._dynamo's"
        " import, which Lightning's import already did",
        "warm: the three gates side by side in one process with every import paid"
        f" (gate_workloads/adapter_warm.py), median of {5 if quick else 20}"
        " interleaved runs each: the adapters' own cost",
    ]
    if quick:
        notes.append("--quick: one run each, no warm-up (the full run takes 5)")
    return Section(
        title="Overfit gate through its adapters vs a plain factory (same model)",
        columns=["gate", "steps", "wall s (vs plain)", "CPU s (vs plain)",
                 "training s (vs plain)", "warm wall (vs plain)",
                 "warm CPU (vs plain)", f"CPU under {TARGET}x plain"],
        rows=rows,
        notes=notes,
    )  # fmt: skip


def warm_gates(project: Path, repeats: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of each gate in one warm process."""
    command = [sys.executable, "adapter_warm.py", str(repeats)]
    process = run_process(command, cwd=project, env=_env()).check("adapter_warm.py")
    return json.loads(process.stdout.strip().splitlines()[-1])


def table(
    runs: dict[str, list],
    lightning_import: tuple[float, float],
    warm: dict[str, dict[str, float]],
) -> list[list[object]]:
    plain = {key: _median(runs["plain"], key) for key in ("wall", "cpu", "train")}
    steps = {run["steps"] for outcomes in runs.values() for run in outcomes}
    if len(steps) != 1:
        raise RuntimeError(f"the three gates took different steps: {sorted(steps)}")
    rows = []
    for name, outcomes in runs.items():
        wall, cpu = _median(outcomes, "wall"), _median(outcomes, "cpu")
        train = _median(outcomes, "train")
        if name == "lightning":
            wall, cpu = wall - lightning_import[0], cpu - lightning_import[1]
        rows.append([
            GATES[name][0], outcomes[0]["steps"],
            f"{wall:.2f} ({ratio(wall, plain['wall'])})",
            f"{cpu:.2f} ({ratio(cpu, plain['cpu'])})",
            f"{train:.3f} ({ratio(train, plain['train'])})",
            _cell(warm, name, "wall"), _cell(warm, name, "cpu"),
            _verdict(cpu <= TARGET * plain["cpu"]),
        ])  # fmt: skip
    return rows


def run_gate(project: Path, name: str) -> dict:
    report = project / f"gate-{name}.json"
    report.unlink(missing_ok=True)
    command = [*mlsmoke_command(), "overfit", "--gate", name, "--no-cache"]
    process = run_process([*command, "--json", str(report)], cwd=project, env=_env())
    process.check(f"mlsmoke overfit --gate {name}")
    (result,) = json.loads(report.read_text())
    if result["verdict"] != "pass":
        raise RuntimeError(f"gate {name} did not memorize: {result['diagnosis']}")
    return {
        "wall": process.seconds,
        "cpu": process.cpu_seconds,
        "train": result["seconds"],
        **result,
    }


def import_cost(project: Path, repeats: int) -> tuple[float, float]:
    """What importing Lightning adds, wall and CPU seconds, beyond torch and the
    torch._dynamo that torch.optim's first step imports in every gate."""

    def seconds(code: str) -> tuple[float, float]:
        runs = [
            run_process([sys.executable, "-c", code], cwd=project, env=_env()).check(
                code
            )
            for _ in range(repeats)
        ]
        cpu = statistics.median(run.cpu_seconds for run in runs)
        return Summary.of(runs).seconds, cpu

    base = seconds(BASE_IMPORT)
    with_lightning = seconds(BASE_IMPORT + ", lightning")
    return with_lightning[0] - base[0], with_lightning[1] - base[1]


def write_project(root: Path) -> Path:
    for source in WORKLOADS.glob("*.py"):
        (root / source.name).write_text(source.read_text())
    lines = ["[tool.mlsmoke]", f"python = {json.dumps(sys.executable)}", ""]
    for name, (_, model, batch, optimizer) in GATES.items():
        lines += [f"[tool.mlsmoke.overfit.{name}]", f'model = "{model}"',
                  f'batch = "{batch}"', 'device = "cpu"']  # fmt: skip
        if optimizer:
            lines.append(f'optimizer = "{optimizer}"')
        lines.append("")
    (root / "pyproject.toml").write_text("\n".join(lines))
    return root


def _cell(warm: dict[str, dict[str, float]], name: str, key: str) -> str:
    value = warm[name][key]
    return f"{value * 1000:.0f} ms ({ratio(value, warm['plain'][key])})"


def _median(outcomes: list[dict], key: str) -> float:
    return statistics.median(outcome[key] for outcome in outcomes)
