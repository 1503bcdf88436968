"""``lr-too-low``: the loss barely moves (or falls far too slowly), and a short probe
at a higher learning rate memorizes. Reports the lr that worked."""

from __future__ import annotations

from mlsmoke.overfit.verdict import curve, probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "lr-too-low"
SLOW = (curve.PLATEAU, curve.FALLING_TOO_SLOWLY)


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not evidence.stopped_short():
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    if reading.shape not in SLOW:
        return None
    sweep = probes.lr_sweep(run, probes.HIGHER_LR_FACTORS)
    working = probes.memorizing_probe(sweep)
    if working is None:
        return None
    lines = [f"at lr {evidence.lr:g}: {reading.reason}"]
    lines += [probes.describe_lr_result(probe) for probe in sweep]
    return Diagnosis(
        CODE,
        f"the learning rate {evidence.lr:g} is too low: at lr {working.lr:g} the batch"
        f" is memorized in {working.steps} steps",
        lines,
        [
            f"set lr = {working.lr:g} in [tool.mlsmoke.overfit], and check the"
            " training config's lr and scheduler (a warmup stuck at its start?)",
            "probe the learning rate first: it causes all four curve patterns",
        ],
    )
