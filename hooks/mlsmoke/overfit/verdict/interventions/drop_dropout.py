"""Drop dropout: the same training with every dropout at p = 0, which tests
``not-learning`` from dropout."""

from __future__ import annotations

from mlsmoke.overfit.verdict import probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with every dropout at p = 0"


def check(run: GateRun) -> runner.Outcome:
    steps = run.settings.max_steps
    return runner.intervene(
        run, CHANGE, lambda seconds: probes.without_dropout(run, steps)
    )
