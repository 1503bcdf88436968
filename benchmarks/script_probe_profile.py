"""``python -m benchmarks.script_probe_profile PROJECT MODE OUT``: one script-mode gate
of PROJECT, in this process, with each launch of the script timed; JSON to OUT.

MODE ``after`` is the gate as it is. MODE ``before`` is the same code with the
probes as they were before the budget: no early stop and no CPU budget (every probe
runs to its steps), so that both sides run in one benchmark on one machine.

Per launch: CPU seconds to its second update (``launch``: the script's start, its
imports, its setup, its first update and its own work after it), of which in imports
(the outermost ``import`` statements), and from there to its end (``steps``: updates,
the script's own work between them, the gate's instruments).
"""

from __future__ import annotations

import builtins
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from mlsmoke.overfit import script_budget, script_gate
from mlsmoke.overfit.process.settings import load_gates
from mlsmoke.overfit.process.worker import enter_project


class ImportClock:
    """CPU seconds spent in outermost imports while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.depth = 0
        self.original = builtins.__import__

    def __enter__(self) -> ImportClock:
        builtins.__import__ = self._timed
        return self

    def __exit__(self, *exc: object) -> None:
        builtins.__import__ = self.original

    def _timed(self, *args: Any, **kwargs: Any) -> Any:
        self.depth += 1
        started = time.process_time()
        try:
            return self.original(*args, **kwargs)
        finally:
            self.depth -= 1
            if self.depth == 0:
                self.seconds += time.process_time() - started


def timed_launches(launches: list[dict]) -> None:
    """Record every launch of the script the gate makes into ``launches``."""
    run_script = script_gate.run_script

    def timed(script: Any, rules: Any, seed: int, *points: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        with ImportClock() as imports:
            outcome = run_script(script, rules, seed, *points)
        total = time.process_time() - cpu
        launch = outcome.watch.launch_cpu or total
        launches.append(
            {
                "lr_scale": rules.lr_scale,
                "steps": outcome.evidence.steps,
                "max_steps": rules.max_steps,
                "cut": outcome.evidence.timed_out,
                "launch": launch,
                "imports": imports.seconds,
                "steps_cpu": total - launch,
                "cpu": total,
                "wall": time.perf_counter() - wall,
            }
        )
        return outcome

    script_gate.run_script = timed


def as_before() -> None:
    """The probes as they were: no early stop, no CPU budget."""
    call = script_gate.ScriptTrainer.__call__

    def unbounded(self: Any, *args: Any, **options: Any) -> Any:
        options.pop("stop_early", None)
        return call(self, *args, **options)

    def no_budget(started: float, run: Any) -> script_budget.ProbeBudget:
        return script_budget.ProbeBudget(time.process_time(), math.inf, 0.0)

    script_gate.ScriptTrainer.__call__ = unbounded  # type: ignore[method-assign]
    script_budget.after_run = no_budget  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    project, mode, out = Path(argv[0]).resolve(), argv[1], Path(argv[2]).resolve()
    enter_project(project)
    (gate,) = load_gates(project)
    launches: list[dict] = []
    timed_launches(launches)
    if mode == "before":
        as_before()
    wall, cpu = time.perf_counter(), time.process_time()
    result, run = script_gate.run_script_gate(gate)
    report = {
        "mode": mode,
        "verdict": result.diagnosis.code,
        "summary": result.diagnosis.summary,
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "launches": launches,
    }
    out.write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
