"""``lr-too-high``: the loss rises, explodes or oscillates at the configured learning
rate (or jumps in one update and then stalls, its ReLUs dead), and a short probe at a
lower one memorizes. Reports the lr that worked."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict import curve, probes
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
    reading = curve.classify_curve(evidence.losses, evidence.target)
    spike = curve.early_spike(evidence.losses)
    if reading.shape not in UNSTABLE and spike is None:
        return None
    sweep = probes.lr_sweep(run, probes.LOWER_LR_FACTORS)
    working = probes.memorizing_probe(sweep)
    if working is None:
        return None
    lines = [f"at lr {evidence.lr:g}: {reading.reason}"]
    behaviour = f"the loss is {reading.shape}"
    if reading.shape not in UNSTABLE and spike is not None:
        behaviour = (
            f"the loss jumps to {evidence.losses[spike]:.4g} at step {spike} and then"
            " stalls"
        )
        lines.insert(0, f"at lr {evidence.lr:g}: one update too large at step {spike}")
    lines += [probes.describe_lr_result(probe) for probe in sweep]
    return Diagnosis(
        CODE,
        f"the learning rate {evidence.lr:g} is too high: {behaviour};"
        f" at lr {working.lr:g} it memorized in {working.steps} steps",
        lines,
        [
            f"set lr = {working.lr:g} (or lower) in [tool.mlsmoke.overfit], and in"
            " training",
            "use a warmup, or clip gradients (torch.nn.utils.clip_grad_norm_)",
            "if a lower lr only delays the problem, look for a numerical issue"
            " (normalization, log of zero)",
        ],
    )
