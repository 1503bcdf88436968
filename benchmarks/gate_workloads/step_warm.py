"""The gate's own loop and a project step function side by side on the same models,
in one warm process: ``python step_warm.py REPEATS [MODEL...]`` prints, per model and
way, the median seconds (whole gate wall and CPU, and its training run) over REPEATS
interleaved runs, after one warm-up each, and the steps each took."""

from __future__ import annotations

import json
import statistics
import sys
import time

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings

MODELS = ("mlp", "cnn", "lm")
WAYS = {"loop": None, "step": "step_project:train_step"}


def settings(model: str, way: str) -> GateSettings:
    return GateSettings(name=f"{model}-{way}", model=f"models:{model}",
                        batch=f"models:{model}_batch", device="cpu",
                        step=WAYS[way])  # fmt: skip


def main(repeats: int, models: list[str]) -> None:
    sys.path.insert(0, ".")
    keys = [(model, way) for model in models or MODELS for way in WAYS]
    timings: dict[str, dict[str, list[float]]] = {
        f"{m}-{w}": {"wall": [], "cpu": [], "train": [], "steps": []} for m, w in keys
    }
    for model, way in keys:
        run_gate(settings(model, way))
    for repeat in range(repeats):
        for model, way in keys if repeat % 2 == 0 else keys[::-1]:
            wall, cpu = time.perf_counter(), time.process_time()
            result, _ = run_gate(settings(model, way))
            assert result.passed, result.report()
            timing = timings[f"{model}-{way}"]
            timing["wall"].append(time.perf_counter() - wall)
            timing["cpu"].append(time.process_time() - cpu)
            timing["train"].append(result.seconds)
            timing["steps"].append(result.steps)
    print(json.dumps({
        name: {key: statistics.median(values) for key, values in kinds.items()}
        for name, kinds in timings.items()
    }))  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
