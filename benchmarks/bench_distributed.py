"""The gate on 2 gloo ranks against the gate on 1, on the template's model and data.

The template's package (``templates/ml-project``: its classifier, its spirals and its
recipe) is copied into a scratch project whose batch callable shards the template's
training set with a ``DistributedSampler`` when a process group is up. Each repeat runs
``mlsmoke overfit --no-cache --world-size N`` for N = 1 and 2 in fresh processes,
interleaved, with the warm worker off and then on, ``OMP_NUM_THREADS=1`` (one thread
per rank). Target: 2 ranks at most 2.5x the wall time of 1. A second table times two
hangs against the configured limits: rank 1 never returns from its loss
(``rank-failed``), and rank 0 alone waits in a ``barrier`` after its update while
rank 1 waits at the step's monitored barrier
(``collective-mismatch``); each gate must end at ``collective-timeout`` (plus its
grace), well before the gate's ``timeout``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_gate import mlsmoke_command
from benchmarks.measure import ProcessRun, Summary, ratio, run_process
from benchmarks.precommit import ROOT
from benchmarks.report import Section

TARGET = 2.5
TEMPLATE = ROOT / "templates" / "ml-project" / "{{cookiecutter.project_slug}}" / "src"
TEMPLATE_PACKAGE = TEMPLATE / "{{cookiecutter.package_name}}"
COLLECTIVE_TIMEOUT = 5.0
TIMEOUT = 60.0

SHARDED = """\
import time

import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
from torch.utils.data import TensorDataset

from tpl.data import spirals
from tpl.recipe import TrainConfig


def loader():
    config = TrainConfig()
    points, labels = spirals(config.n_train, seed=config.seed)
    dataset = TensorDataset(points, labels)
    sharded = dist.is_available() and dist.is_initialized()
    sampler = DistributedSampler(dataset) if sharded else RandomSampler(dataset)
    return DataLoader(dataset, batch_size=config.batch_size, sampler=sampler)


def rank_one_hangs(model, batch):
    if dist.get_rank() == 1:
        time.sleep(3600)
    x, y = batch
    return model(x, y)[1]  # the template's model returns (logits, loss)


def rank_zero_evaluates(model, batch, optimizer):
    x, y = batch
    optimizer.zero_grad()
    loss = model(x, y)[1]
    loss.backward()
    optimizer.step()
    if dist.get_rank() == 0:
        dist.barrier()  # an evaluation only rank 0 runs
    return loss
"""
WORKER = {False: "off", True: "on"}
HANGS = {"hang": "rank 1 sleeps in its loss", "barrier": "rank 0 alone in a barrier"}


def run(quick: bool) -> Section:
    repeats = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-ddp-") as scratch:
        project = write_project(Path(scratch))
        runs = {worker: _interleaved(project, repeats, worker) for worker in WORKER}
        hangs = {gate: run_gate(project, 2, "--gate", gate)[0] for gate in HANGS}
    rows = []
    for worker, by_size in runs.items():
        one, two = (Summary.of([r for r, _ in by_size[n]]) for n in (1, 2))
        steps = {n: statistics.median(s for _, s in by_size[n]) for n in (1, 2)}
        met = two.seconds <= TARGET * one.seconds
        rows += [
            [WORKER[worker], 1, steps[1], f"{one.seconds:.2f}", ""],
            [WORKER[worker], 2, steps[2],
             f"{two.seconds:.2f} ({ratio(two.seconds, one.seconds)})",
             "yes" if met else "NO"],
        ]  # fmt: skip
    section = Section(
        title="The gate on 2 gloo ranks vs 1 process, the template's model (wall time)",
        columns=["worker", "ranks", "steps", "wall s", f"2 ranks <= {TARGET}x 1"],
        rows=rows,
        notes=[
            f"median of {repeats} run(s) each of `mlsmoke overfit --no-cache"
            " --world-size N`, interleaved; OMP_NUM_THREADS=1, one thread per rank;"
            " the template's classifier, spirals and built-in Adam; the batch sharded"
            " by DistributedSampler on 2 ranks",
            "worker on is how the hooks run (on Linux by default): the gate's job and"
            " its ranks fork from a worker that has imported torch and torch._dynamo."
            " With the worker off, each rank's DistributedDataParallel constructor"
            " imports torch._dynamo itself (1.7-1.9 s of CPU here), which one process"
            " with the built-in optimizers never does",
        ],
    )
    section.tables.append(
        Section(
            title="Time to end a gate whose ranks hang (wall time)",
            columns=["hang", "collective-timeout s", "timeout s",
                     "gate ended after s", "code"],  # fmt: skip
            rows=[[HANGS[gate], f"{COLLECTIVE_TIMEOUT:g}", f"{TIMEOUT:g}",
                   f"{run.seconds:.2f}", _code(run, gate)]
                  for gate, run in hangs.items()],  # fmt: skip
            notes=[
                "one run each, worker off: the interpreter's start, torch's import and"
                " the ranks' fork included. A rank that waits in a collective, or at"
                " the step's monitored barrier, gives up after collective-timeout; the"
                " other is stopped with its stack 1 s later, or reports on its own",
            ],
        )
    )
    return section


def write_project(root: Path) -> Path:
    project = root / "project"
    shutil.copytree(TEMPLATE_PACKAGE, project / "tpl")
    (project / "sharded.py").write_text(SHARDED)
    (project / "pyproject.toml").write_text(f"""\
[tool.mlsmoke.overfit]
model = "tpl.model:build_model"
batch = "sharded:loader"
collective-timeout = {COLLECTIVE_TIMEOUT}
timeout = {TIMEOUT}
[tool.mlsmoke.overfit.template]
[tool.mlsmoke.overfit.hang]
loss = "sharded:rank_one_hangs"
[tool.mlsmoke.overfit.barrier]
step = "sharded:rank_zero_evaluates"
""")
    return project


def _interleaved(
    project: Path, repeats: int, worker: bool
) -> dict[int, list[tuple[ProcessRun, int]]]:
    """``repeats`` gates on 1 and on 2 ranks, alternating which goes first; with the
    worker, one gate first brings it up, and the worker is stopped after."""
    runs: dict[int, list[tuple[ProcessRun, int]]] = {1: [], 2: []}
    try:
        if worker:
            run_gate(project, 1, worker=True)
        for repeat in range(repeats):
            for world_size in (1, 2) if repeat % 2 == 0 else (2, 1):
                runs[world_size].append(run_gate(project, world_size, worker=worker))
    finally:
        if worker:
            command = [*mlsmoke_command(), "worker", "stop", "--project", str(project)]
            run_process(command, cwd=project, env=_env(worker=True))
    return runs


def _env(worker: bool = False) -> dict[str, str]:
    return {**os.environ, "MLSMOKE_WORKER": "1" if worker else "0",
            "OMP_NUM_THREADS": "1", "MLSMOKE_PYTHON": sys.executable}  # fmt: skip


def run_gate(
    project: Path, world_size: int, *args: str, worker: bool = False
) -> tuple[ProcessRun, int]:
    report = project / "result.json"
    report.unlink(missing_ok=True)
    gate = list(args) or ["--gate", "template"]
    command = [*mlsmoke_command(), "overfit", "--no-cache", *gate,
               "--world-size", str(world_size), "--json", str(report)]  # fmt: skip
    env = _env(worker)
    ran = run_process(command, cwd=project, env=env)
    if not args:
        ran.check(f"the gate on {world_size} rank(s)")
    steps = json.loads(report.read_text())[0]["steps"] if report.exists() else 0
    return ran, steps


def _code(run: ProcessRun, gate: str) -> str:
    for line in run.stdout.splitlines():
        if line.startswith(f"overfit {gate}:"):  # overfit hang: FAIL rank-failed ...
            return (line.split() + ["?"] * 4)[3]
    return "?"
