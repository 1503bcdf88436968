"""``not-learning``: the loss plateaus, no probe helps, and gradients flow. Gives
gradient-norm evidence (vanishing gradients, dead units) and the field guide's
suggestions."""

from __future__ import annotations

import math

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import curve, probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "not-learning"
VANISHING = 1e-6

SUGGESTIONS = [
    "check that the loss is the right one for the task and the targets",
    "look for regularization that is too strong (weight decay, penalties, label"
    " smoothing, dropout)",
    "check the init: dead ReLUs (large negative biases), saturated sigmoid/tanh,"
    " missing normalization in deep stacks",
    "check that labels and inputs are aligned and the model can represent the batch",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not evidence.stopped_short():
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    if reading.shape != curve.PLATEAU:
        return None
    lines = [reading.reason] + gradient_lines(evidence)
    lines += [probes.describe_lr_result(probe) for probe in _lr_probes(run)]
    return Diagnosis(
        CODE,
        f"the loss plateaus at {curve.tail_level(evidence.losses):.4g} above the target"
        f" {evidence.target:.4g}, and no learning rate probed helps",
        lines,
        SUGGESTIONS,
    )


def gradient_lines(evidence: Evidence) -> list[str]:
    norms = [n for n in evidence.grad_norms if math.isfinite(n)]
    lines = []
    if norms:
        lines.append(
            f"gradient norm {norms[0]:.3g} at step 0, {norms[-1]:.3g} at the end"
            f" (min {min(norms):.3g})"
        )
        if max(norms) < VANISHING:
            lines.append("gradients vanish: every step moves the weights by ~nothing")
    dead = [name for name, norm in evidence.first_grads.items() if norm == 0.0]
    if dead:
        shown = ", ".join(dead[:6]) + (
            f", and {len(dead) - 6} more" if len(dead) > 6 else ""
        )
        lines.append(f"zero gradient at the first step (dead units upstream): {shown}")
    return lines


def _lr_probes(run: GateRun) -> list[Evidence]:
    """The higher-lr probes that lr-too-low already ran, re-read from the memo."""
    return probes.lr_sweep(run, probes.HIGHER_LR_FACTORS)
