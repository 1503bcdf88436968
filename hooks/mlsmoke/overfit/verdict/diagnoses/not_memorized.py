"""``not-memorized``: the run ended without reaching the target; the fallback. When
interventions refuted every cause the evidence suggested, it says what was tried."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict import lr_range, probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner
from mlsmoke.overfit.verdict.result import NOT_MEMORIZED, Diagnosis


@diagnoser(NOT_MEMORIZED)
def diagnose(run: GateRun) -> Diagnosis:
    evidence = run.evidence
    losses = evidence.losses
    if losses and not math.isfinite(losses[-1]):
        summary = f"the loss became {losses[-1]} at step {len(losses) - 1}"
    elif evidence.timed_out:
        summary = (
            f"stopped at the timeout ({run.settings.timeout:g} s) after"
            f" {evidence.steps} steps, loss {losses[0]:.4g} -> {losses[-1]:.4g}"
        )
    else:
        summary = (
            f"the loss went from {losses[0]:.4g} to {losses[-1]:.4g} in"
            f" {evidence.steps} steps; the target is {evidence.target:.4g}"
        )
    if runner.refuted(run):  # annotate() lists them
        summary += "; no cause the evidence suggested was confirmed on a copy"
    return Diagnosis(
        NOT_MEMORIZED,
        summary,
        [f"optimizer lr {evidence.lr:g}, {evidence.max_steps} steps allowed"]
        + _lrs_tried(run),
        [
            "probe the learning rate first: it causes all four curve patterns",
            "check that gradients reach every parameter and the loss is the right one",
        ],
    )


def _lrs_tried(run: GateRun) -> list[str]:
    """The range test's probes, where a diagnosis before ran it."""
    test = run.memo.get(lr_range.MEMO_KEY)
    if not isinstance(test, lr_range.RangeTest):
        return []
    return [
        f"tried: {probes.describe_lr_result(probe)}"
        for probe in test.probes
        if probe.losses or probe.error is not None
    ]
