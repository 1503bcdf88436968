"""The three adapter gates side by side in one warm process: ``python adapter_warm.py
REPEATS`` prints each gate's median seconds (wall and CPU) over REPEATS interleaved
runs, after one warm-up each. Imports are paid before timing starts, so the figures
are the gate's own work: adapters, training, diagnosis and checks."""

from __future__ import annotations

import json
import statistics
import sys
import time

import lightning  # noqa: F401  (paid before timing, as a Lightning project does)
import torch._dynamo  # noqa: F401  (torch.optim's first step imports it)

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings

P = "adapter_project"
GATES = {
    "plain": dict(model=f"{P}:mlp", batch=f"{P}:first_batch", optimizer=f"{P}:adam"),
    "loader": dict(model=f"{P}:mlp", batch=f"{P}:train_loader", optimizer=f"{P}:adam"),
    "lightning": dict(model=f"{P}:lightning_mlp", batch=f"{P}:train_loader"),
}


def settings(name: str) -> GateSettings:
    keys = GATES[name]
    unset = ["lr"] if "optimizer" in keys else ["optimizer", "lr"]
    return GateSettings(name=name, device="cpu", lr=None, unset=unset, **keys)


def main(repeats: int) -> None:
    sys.path.insert(0, ".")
    timings: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "cpu": []} for name in GATES
    }
    for name in GATES:
        run_gate(settings(name))
    for _ in range(repeats):
        for name in GATES:
            wall, cpu = time.perf_counter(), time.process_time()
            result, _ = run_gate(settings(name))
            assert result.passed, result.report()
            timings[name]["wall"].append(time.perf_counter() - wall)
            timings[name]["cpu"].append(time.process_time() - cpu)
    print(json.dumps({
        name: {key: statistics.median(values) for key, values in kinds.items()}
        for name, kinds in timings.items()
    }))  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]))
