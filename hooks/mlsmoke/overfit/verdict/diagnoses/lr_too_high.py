"""``lr-too-high``: the lr range test finds a lower learning rate that memorizes. The
curve at the configured rate usually rises, explodes or oscillates, or jumps in one
update and then stalls, its ReLUs dead. Reports the lr that worked."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict import curve, curve_measures, lr_range, probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "lr-too-high"
UNSTABLE = (curve.RISING, curve.EXPLODING, curve.OSCILLATING)


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not evidence.stopped_short():
        return None
    if not math.isfinite(evidence.losses[0]):
        return None  # broken at init: no learning rate is involved yet
    test = lr_range.lr_range_test(run)
    working = test.working
    if working is None or working.lr >= evidence.lr:
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    spike = curve_measures.early_spike(evidence.losses)
    lines = [f"at lr {evidence.configured_lr:g}: {reading.reason}"]
    behaviour = f"the loss is {reading.shape}"
    if reading.shape not in UNSTABLE and spike is not None:
        behaviour = (
            f"the loss jumps to {evidence.losses[spike]:.4g} at step {spike} and then"
            " stalls"
        )
        lines.insert(
            0, f"at lr {evidence.configured_lr:g}: one update too large at step {spike}"
        )
    elif reading.shape not in UNSTABLE:
        behaviour = f"{reading.reason}"
    lines += [probes.describe_lr_result(probe) for probe in test.probes]
    where = (
        "in [tool.mlsmoke.overfit], and in training"
        if evidence.optimizer_source.startswith("built-in")
        or not evidence.optimizer_source
        else f"in {evidence.optimizer_source}"
    )
    return Diagnosis(
        CODE,
        f"the learning rate {evidence.configured_lr:g} is too high: {behaviour};"
        f" at lr {working.configured_lr:g} it memorized in {working.steps} steps",
        lines,
        [
            f"set lr = {working.configured_lr:g} (or lower) {where}  (checked: at lr"
            f" {working.configured_lr:g} the batch is memorized in {working.steps}"
            " steps)",
            "use a warmup, or clip gradients (torch.nn.utils.clip_grad_norm_)",
            "if a lower lr only delays the problem, look for a numerical issue"
            " (normalization, log of zero)",
        ],
    )
