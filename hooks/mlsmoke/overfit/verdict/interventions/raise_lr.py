"""Raise the learning rate: the range test's probes above the run's own rate
(``lr_range.py``), which test ``lr-too-low``, and which tell a slow part of the model
from a frozen one (adapters on a frozen base memorize at a higher rate)."""

from __future__ import annotations

from mlsmoke.overfit.verdict import lr_range
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with a higher lr"


def check(run: GateRun) -> runner.Outcome:
    """The first rate above the run's own that memorizes; else the highest one
    tried, which refutes. Not kept with the other outcomes: the diagnoses that read
    the range test list its probes themselves."""
    test = lr_range.lr_range_test(run)
    working = test.working
    above = test.side(lr_range.UP)
    if working is not None and working.lr > run.evidence.lr:
        chosen = working
    elif above:
        chosen = above[-1]
    else:
        return runner.Outcome(CHANGE, skipped="no higher lr could be probed")
    return runner.Outcome(f"at lr {chosen.configured_lr:g}", chosen)
