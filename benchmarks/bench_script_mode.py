"""The gate in script mode against factory mode on the same tiny model.

One project holds an MLP, its batch and loss as factories, and a ``train.py`` that
trains the same model on the same batch through a ``DataLoader`` with
``torch.optim.Adam`` at the same lr. Factory mode is given that optimizer as its
``optimizer`` callable, so that both import torch.optim (and with it torch._dynamo).
Each repeat runs ``mlsmoke overfit --no-cache`` once per mode in a fresh process,
interleaved, worker off, one CPU thread. Target: script mode at most 1.3x factory mode.
A second table profiles the nanoGPT-shaped repository's real ``train.py`` with
``mlsmoke profile --script`` and reports the profiler's overhead.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_gate import mlsmoke_command
from benchmarks.measure import Summary, ratio, run_process
from benchmarks.report import Section

TARGET = 1.3
LR = 3e-3
MODES = ("factory", "script")
PROFILE_ARGS = ["--device=cpu", "--compile=False", "--dtype=float32", "--n_layer=4",
                "--n_head=4", "--n_embd=128", "--block_size=64", "--batch_size=8",
                "--gradient_accumulation_steps=2", "--eval_iters=1",
                "--warmup_iters=10", "--out_dir={out_dir}"]  # fmt: skip

MODELS = """\
import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, x):
        return self.body(x)  # (B, 4)


def build():
    torch.manual_seed(0)
    return MLP()


def one_batch():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(32, 32, generator=generator)
    return x, torch.randint(0, 4, (32,), generator=generator)


def loss(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)


def adam(params):
    return torch.optim.Adam(params, lr=LR)
"""

TRAIN = """\
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from models import build, one_batch

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

model = build()
loader = DataLoader(TensorDataset(*one_batch()), batch_size=32)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
for epoch in range(args.epochs):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def run(quick: bool) -> Section:
    repeats = 1 if quick else 5
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-script-") as tmp:
        project = write_project(Path(tmp))
        runs: dict[str, list] = {mode: [] for mode in MODES}
        for repeat in range(repeats):
            order = MODES if repeat % 2 == 0 else MODES[::-1]
            for mode in order:
                runs[mode].append(run_gate(project, mode))
    summaries = {mode: Summary.of([r for r, _ in runs[mode]]) for mode in MODES}
    steps = {mode: statistics.median(s for _, s in runs[mode]) for mode in MODES}
    factory, script = summaries["factory"], summaries["script"]
    met = script.seconds <= TARGET * factory.seconds
    section = Section(
        title="Script mode vs factory mode on the same MLP (wall time)",
        columns=["mode", "steps", "wall s", "peak MiB", f"script <= {TARGET}x factory"],
        rows=[
            ["factory", steps["factory"], f"{factory.seconds:.2f}",
             f"{factory.peak_rss_mib:.0f}", ""],
            ["script", steps["script"],
             f"{script.seconds:.2f} ({ratio(script.seconds, factory.seconds)})",
             f"{script.peak_rss_mib:.0f}", "yes" if met else "NO"],
        ],  # fmt: skip
        notes=[
            f"median of {repeats} fresh `mlsmoke overfit --no-cache` processes per"
            " mode, interleaved; worker off; OMP_NUM_THREADS=1; Adam (torch.optim) at"
            f" lr {LR} in both; the script pins its DataLoader's first batch",
        ],
    )
    section.tables.append(profile_nanogpt(steps=3 if quick else 10))
    return section


def profile_nanogpt(steps: int) -> Section:
    """``mlsmoke profile --script`` on the nanoGPT-shaped repository at a realistic
    small config (4 layers, width 128, 64 tokens, 8 x 2 micro-batches), unpinned."""
    from tests.overfit.nanogpt_shaped import write_nanogpt_repo

    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-profile-") as tmp:
        project = write_nanogpt_repo(Path(tmp) / "nanogpt")
        report = project / "profile.json"
        command = [*mlsmoke_command(), "profile", "--script", "train.py", "--steps",
                   str(steps), "--warmup", "2", "--json", str(report), "--",
                   *PROFILE_ARGS]  # fmt: skip
        env = {**os.environ, "MLSMOKE_WORKER": "0", "OMP_NUM_THREADS": "1",
               "MLSMOKE_PYTHON": sys.executable}  # fmt: skip
        run_process(command, cwd=project, env=env).check("mlsmoke profile --script")
        figures = json.loads(report.read_text())[0]["figures"]
    threads = figures["threads"]
    return Section(
        title="profile --script on the nanoGPT-shaped repository",
        columns=["parameters", "steps/s", "tokens/s", "profiled step ms",
                 "profiler overhead", "1 thread ms", "2 threads ms"],  # fmt: skip
        rows=[
            [
                f"{figures['model']['parameters']:,}",
                f"{figures['steps_per_second']:.2f}",
                f"{figures['tokens_per_second']:,.0f}",
                f"{1000 / figures['profiled_steps_per_second']:.0f}",
                f"{1000 * figures['profiler_overhead_seconds']:.0f} ms"
                f" ({100 * figures['profiler_overhead_share']:.0f}%)",
                f"{1000 * threads['default_step_seconds']:.0f}",
                f"{1000 * (threads['other_step_seconds'] or 0):.0f}",
            ]
        ],
        notes=[
            f"{steps} profiled steps after 2 warm-up, OMP_NUM_THREADS=1 (the other"
            " thread count is timed by the cpu-threads rule); args: "
            + " ".join(PROFILE_ARGS)
        ],
    )


def run_gate(project: Path, mode: str) -> tuple:
    report = project / f"{mode}.json"
    report.unlink(missing_ok=True)
    command = [*mlsmoke_command(), "overfit", "--gate", f"{mode}-mode", "--no-cache"]
    env = {**os.environ, "MLSMOKE_WORKER": "0", "OMP_NUM_THREADS": "1"}
    ran = run_process([*command, "--json", str(report)], cwd=project, env=env)
    ran.check(f"mlsmoke overfit --gate {mode}")
    (result,) = json.loads(report.read_text())
    if result["verdict"] != "pass":
        raise RuntimeError(f"{mode} did not memorize: {result['diagnosis']}")
    return ran, result["steps"]


def write_project(root: Path) -> Path:
    (root / "models.py").write_text(MODELS.replace("lr=LR", f"lr={LR}"))
    (root / "train.py").write_text(TRAIN)
    (root / "pyproject.toml").write_text(
        f"[tool.mlsmoke]\npython = {json.dumps(sys.executable)}\n\n"
        "[tool.mlsmoke.overfit.factory-mode]\n"
        'model = "models:build"\nbatch = "models:one_batch"\nloss = "models:loss"\n'
        f'optimizer = "models:adam"\nlr = {LR}\ndevice = "cpu"\n\n'
        "[tool.mlsmoke.overfit.script-mode]\n"
        f'script = "train.py"\nargs = ["--lr={LR}", "--epochs=100000"]\n'
    )
    return root
