"""``wrong-objective``: the loss rises at every learning rate probed, or falls below
zero without bound: a flipped sign, or a maximized quantity."""

from __future__ import annotations

import math

from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.verdict import curve, probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "wrong-objective"
# A negative initial loss cannot be scaled by target-ratio; the engine says so.
NEGATIVE_INITIAL = "target-ratio-undefined"
PROBE_STEPS = 30

SUGGESTIONS = [
    "check the sign of the loss: minimize cross-entropy, not its negative",
    "make sure the optimizer minimizes (no maximize=True, no gradient ascent)",
    "use a loss on the model's raw logits as the function expects (nll_loss takes"
    " log-probabilities; cross_entropy takes logits)",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if _negative_at_init(run):
        return _falls_without_bound(run)
    if not evidence.stopped_short(3):
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    if reading.shape == curve.UNBOUNDED_BELOW:
        return Diagnosis(
            CODE,
            "the loss falls below zero without bound: a flipped sign or a maximized"
            " quantity",
            [reading.reason],
            SUGGESTIONS,
        )
    if reading.shape not in (curve.RISING, curve.EXPLODING):
        return None
    sweep = probes.lr_sweep(run, probes.LOWER_LR_FACTORS)
    if not sweep or not all(_climbs(run, probe.losses) for probe in sweep):
        return None
    if _shape(run, sweep[-1].losses) != curve.RISING:
        return None  # still exploding at the smallest lr: not a steady climb
    lines = [f"at lr {evidence.lr:g}: {reading.reason}"]
    lines += [probes.describe_lr_result(probe) for probe in sweep]
    lrs = ", ".join(f"{lr:g}" for lr in [evidence.lr] + [p.lr for p in sweep])
    return Diagnosis(
        CODE,
        f"the loss rises at every learning rate probed ({lrs}): the optimizer climbs"
        " the loss instead of descending it",
        lines,
        SUGGESTIONS,
    )


def _shape(run: GateRun, losses: list[float]) -> str:
    return curve.classify_curve(losses, run.evidence.target).shape


def _climbs(run: GateRun, losses: list[float]) -> bool:
    if len(losses) < 3 or losses[-1] <= losses[0]:
        return False
    return _shape(run, losses) in (curve.RISING, curve.EXPLODING)


def _negative_at_init(run: GateRun) -> bool:
    error = run.evidence.error
    return (
        isinstance(error, ProjectProblem)
        and error.code == NEGATIVE_INITIAL
        and bool(run.evidence.losses)
    )


def _falls_without_bound(run: GateRun) -> Diagnosis | None:
    """A negative loss at init: a short probe that never stops at a target tells a
    flipped sign (the loss keeps falling) from a legitimately negative loss."""
    if not probes.may_probe(run):
        return None
    probe = probes.without_target(run, PROBE_STEPS)
    losses = probe.losses
    finite = [v for v in losses if math.isfinite(v)]
    if probe.error is not None or len(finite) < 4:
        return None
    falling = curve.is_unbounded_below(finite) or (
        len(finite) < len(losses) and finite[-1] < finite[0]
    )
    if not falling:
        return None
    return Diagnosis(
        CODE,
        f"the loss is negative at init ({losses[0]:.4g}) and falls without bound:"
        " a flipped sign or a maximized quantity",
        [
            f"in {probe.steps} steps at lr {probe.lr:g} the loss went {losses[0]:.4g}"
            f" -> {losses[-1]:.4g}",
            "a loss to minimize is bounded below, usually by 0",
        ],
        SUGGESTIONS
        + [
            "if the loss is meant to go negative (a log-likelihood of continuous"
            " data), set an absolute target-loss instead of target-ratio",
        ],
        losses=list(losses),  # the headline draws this run, not the 0-step main one
        steps=probe.steps,
    )
