"""``max-steps`` from the gate's own runs: after its first run passes, init runs it
with two more seeds and sets ``max-steps`` to at least twice the slowest run's steps,
rounded up to a readable number. The gate then fails fast on a model that stopped
learning, and a seed or a library update that costs some steps does not fail it.
When the slowest run took more than half the gate's ``timeout``, the timeout gets the
same headroom.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsmoke.adopt import gate_setup
from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.textfile import write_all
from mlsmoke.errors import MlsmokeError
from mlsmoke.overfit.process.settings import DEFAULT_TIER, TIER_DEFAULTS

HEADROOM = 2
FLOOR = 20  # a gate that memorizes in a few steps still gets a few dozen
MORE_SEEDS = 2  # beside the first run's: three runs
# The other seeds may take longer than the first: their budget is this many times its
# steps (and never below the configured max-steps), so they count rather than fail.
BUDGET_FACTOR = 4


@dataclass(frozen=True)
class SeedRun:
    seed: int
    passed: bool
    steps: int
    reason: str = ""  # why it failed
    seconds: float = 0.0


@dataclass(frozen=True)
class Calibration:
    max_steps: int | None  # None: the runs did not all pass
    runs: tuple[SeedRun, ...]
    timeout: int | None = None  # set when the slowest run left too little headroom

    def summary(self) -> str:
        seeds = ", ".join(f"seed {run.seed}: {run.steps}" for run in self.runs)
        if self.max_steps is None:
            failed = next(run for run in self.runs if not run.passed)
            return (
                f"max-steps is not calibrated: the gate did not pass with seed"
                f" {failed.seed} ({failed.reason}); it passed with its own seed, so"
                " overfit-batch stays on, but it may hang on the seed"
            )
        slowest = max(run.steps for run in self.runs)
        timeout = (
            f"; timeout = {self.timeout}: {HEADROOM}x the slowest run's"
            f" {max(run.seconds for run in self.runs):.0f} s"
            if self.timeout
            else ""
        )
        return (
            f"max-steps = {self.max_steps}: at least {HEADROOM}x the slowest of"
            f" {len(self.runs)} seeds ({slowest} steps; {seeds}){timeout}"
        )

    def comment(self) -> str:
        """The line above ``max-steps`` in pyproject.toml."""
        seeds = ", ".join(str(run.seed) for run in self.runs)
        slowest = max(run.steps for run in self.runs)
        return (
            f"at least {HEADROOM}x the slowest of seeds {seeds} ({slowest} steps),"
            " by mlsmoke init"
        )


def readable_ceiling(value: int) -> int:
    """The smallest readable number at or above ``value``: a multiple of half its
    leading power of ten (460 -> 500, 130 -> 150, 74 -> 75, 7 -> 7)."""
    if value <= 10:
        return max(value, 1)
    step = 10 ** (len(str(value)) - 1) // 2
    return math.ceil(value / step) * step


def max_steps_for(steps: Sequence[int]) -> int:
    """``max-steps`` for runs that took ``steps``: headroom over the slowest."""
    return readable_ceiling(max(FLOOR, HEADROOM * max(steps)))


def timeout_for(seconds: Sequence[float], configured: float) -> int | None:
    """A timeout with headroom over the slowest run (whose steps are half of
    max-steps), when ``configured`` has too little; None: keep it."""
    needed = readable_ceiling(math.ceil(HEADROOM * max(seconds)))
    return needed if needed > configured else None


def calibration(runs: Sequence[SeedRun], timeout: float) -> Calibration:
    """``timeout``, the gate's configured one."""
    if all(run.passed for run in runs):
        steps = max_steps_for([run.steps for run in runs])
        seconds = [run.seconds for run in runs]
        return Calibration(steps, tuple(runs), timeout_for(seconds, timeout))
    return Calibration(None, tuple(runs))


def applies(table: Any) -> bool:
    """Whether init calibrates the gate of ``table``: one gate, no max-steps set."""
    from mlsmoke.overfit.process.settings import TABLE_KEYS

    if not isinstance(table, dict) or "max-steps" in table:
        return False
    return not any(
        isinstance(v, dict) and k != "tiers" and k not in TABLE_KEYS
        for k, v in table.items()
    )


def calibrate_max_steps(
    project: Project, steps: int, seconds: float, needed: bool = False
) -> None:
    """After a first run that passed in ``steps``: max-steps (and timeout, if it
    needs headroom) in pyproject.toml from three seeds' runs, and said. ``needed``:
    the pass took more than the configured max-steps, which must then grow even when
    the other seeds say nothing."""
    data = toml.parse(project.pyproject.text, project.name(project.pyproject))
    table = toml.lookup(data, gate_setup.TABLE)
    if steps <= 0 or not applies(table):
        return
    assert isinstance(table, dict)
    seed = table.get("seed", 0)
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else 0
    first = SeedRun(seed, True, steps, seconds=seconds)
    try:
        result = calibrate(project.root, first)
    except MlsmokeError as error:
        print(f"mlsmoke init: max-steps is not calibrated: {error}", file=sys.stderr)
        result = Calibration(None, (first,))
    print(f"mlsmoke init: {result.summary()}")
    if result.max_steps is None and needed:
        configured = table.get("timeout", TIER_DEFAULTS[DEFAULT_TIER]["timeout"])
        result = calibration([first], float(configured))
        print(f"mlsmoke init: {result.summary()}")
    if result.max_steps is None:
        return
    gate_setup.set_calibrated(project, "max-steps", result.max_steps, result.comment())
    if result.timeout is not None and "timeout" not in table:
        why = f"at least {HEADROOM}x the slowest run's seconds, by mlsmoke init"
        gate_setup.set_calibrated(project, "timeout", result.timeout, why)
    write_all([project.pyproject])


def calibrate(root: Path, first: SeedRun) -> Calibration:
    """Run the gate of ``root`` with the seeds after ``first.seed`` (its first run's)
    in one worker, its output kept; the calibration of the three."""
    from mlsmoke.interpreter import (
        configured_python,
        first_that_imports,
        project_candidates,
    )
    from mlsmoke.overfit.process.settings import load_gates
    from mlsmoke.overfit.process.run_gates import run_worker

    (gate,) = load_gates(root)
    budget = max(gate.max_steps, BUDGET_FACTOR * first.steps)
    seeds = [first.seed + offset for offset in range(1, MORE_SEEDS + 1)]
    gates = [
        dataclasses.replace(
            gate,
            name=f"seed-{seed}",
            seed=seed,
            max_steps=budget,
            timeout=max(gate.timeout, BUDGET_FACTOR * first.seconds),
        )
        for seed in seeds
    ]
    print(
        f"Calibrating max-steps: the gate with seeds {', '.join(map(str, seeds))}"
        f" (up to {budget} steps each)",
        flush=True,
    )
    configured = configured_python(root, "overfit", gate.python)
    python = first_that_imports(project_candidates(root, configured), ["torch"])
    results, _ = run_worker(root, python.path, gates, None, False)
    ran = {result.gate: result for result in results}
    runs = [first]
    for seed, settings in zip(seeds, gates):
        result = ran.get(settings.name)
        if result is None:
            runs.append(SeedRun(seed, False, 0, "it did not run"))
            continue
        reason = f"{result.diagnosis.code}: {result.diagnosis.summary}"
        steps = result.steps_to_pass
        runs.append(SeedRun(seed, result.passed, steps, reason, result.seconds))
    return calibration(runs, gate.timeout)
