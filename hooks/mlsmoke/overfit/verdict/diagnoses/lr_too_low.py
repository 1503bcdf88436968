"""``lr-too-low``: the learning rate is 0, a scheduler takes it to nothing, or the loss
barely moves (or falls far too slowly) and the lr range test finds a higher rate that
memorizes, or a loss that improves with every decade up. Reports the lr that worked
and where the lr comes from. A training script's own lr (script mode) is only blamed
when it is anomalous for its optimizer (``usual_lr.py``) or barely moves the loss: a
usual lr that the gate's budget is short for is ``too-slow``, whose hint names
max-steps."""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import curve, curve_measures, lr_range, probes, usual_lr
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "lr-too-low"
# A schedule that takes the lr below this fraction of its start has stopped training.
DECAYED = 1e-3
# Without a rate that memorizes, "better with every decade" must also have covered
# this fraction of the way to the target.
TREND_PROGRESS = 0.5
# A script's usual lr is still blamed when its loss covered less than this fraction
# of the way to the target: that is no budget too short, the lr barely trains.
BARELY_MOVED = 0.1
CHECK_RECIPE = "probe the learning rate first: it causes all four curve patterns"


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not evidence.stopped_short():
        return None
    if evidence.lrs and max(evidence.lrs) == 0.0:
        return _zero(evidence)
    decayed = _decayed_at(evidence)
    if decayed is not None:
        return _decayed(evidence, decayed)
    if (
        evidence.script
        and not usual_lr.is_anomalous(evidence.optimizer, evidence.configured_lr)
        and curve_measures.relative_progress(evidence.losses, evidence.target)
        >= BARELY_MOVED
    ):
        return None  # the script's own lr is a usual one: the budget, not the lr
    reading = curve.classify_curve(evidence.losses, evidence.target)
    test = lr_range.lr_range_test(run)
    checked = ""
    working = test.working
    if working is not None and working.lr > evidence.lr:
        summary = (
            f"at lr {working.configured_lr:g} the batch is memorized in"
            f" {working.steps} steps"
        )
        advice = working.configured_lr
        checked = f"  (checked: {summary})"
    elif working is None and _improves_enough(test, evidence):
        best = test.side(lr_range.UP)[-1]
        summary = f"the loss improves with every decade up to lr {best.configured_lr:g}"
        advice = best.configured_lr
    else:
        return None
    lines = [f"at lr {evidence.configured_lr:g}: {reading.reason}", *_origin(evidence)]
    lines += [probes.describe_lr_result(probe) for probe in test.probes]
    lines += _frozen_by_design(evidence, checked)
    return Diagnosis(
        CODE,
        f"the learning rate {evidence.configured_lr:g} is too low: {summary}",
        lines,
        [
            f"raise the lr to about {advice:g}{_where(evidence)}, and check the"
            " training config's lr and scheduler (a warmup stuck at its start?)"
            + checked,
            CHECK_RECIPE,
        ],
    )


def _frozen_by_design(evidence: Evidence, checked: str) -> list[str]:
    """A model that freezes part of itself and memorizes at a higher lr: the
    freezing is a design it declares (adapters on a frozen base), not the cause."""
    frozen = [name for name, on in evidence.requires_grad.items() if not on]
    if not frozen or not checked:
        return []
    return [
        f"{len(frozen)} parameter tensors are frozen (requires_grad=False), and the"
        " parts that train memorize the batch at the higher lr: the freezing is not"
        " why it is not memorized"
    ]


def _improves_enough(test: lr_range.RangeTest, evidence: Evidence) -> bool:
    if not lr_range.improves_upward(test, evidence):
        return False
    best = test.side(lr_range.UP)[-1]
    return (
        curve_measures.relative_progress(best.losses, evidence.target) >= TREND_PROGRESS
    )


def _zero(evidence: Evidence) -> Diagnosis:
    if evidence.scheduler and evidence.unscheduled_lr:
        origin = (
            f"the scheduler {evidence.scheduler} sets it to 0 (the optimizer's own lr"
            f" is {evidence.unscheduled_lr:g})"
        )
        fix = f"check {evidence.scheduler}: a warmup stuck at its first step, or a"
        fix += " lambda that returns 0"
    else:
        origin = f"the optimizer {_recipe(evidence)} is built with lr 0"
        fix = "give the optimizer a learning rate above 0"
    return Diagnosis(
        CODE,
        f"the learning rate is 0 at every step: {origin}",
        [
            f"lr 0 for all {len(evidence.lrs)} updates; the loss stays at"
            f" {evidence.losses[-1]:.4g}",
            f"optimizer {_recipe(evidence)}",
        ],
        [fix, CHECK_RECIPE],
    )


def _decayed_at(evidence: Evidence) -> int | None:
    """The step at which a scheduler took the lr below DECAYED of its start."""
    lrs = evidence.lrs
    if not evidence.scheduler or not lrs or lrs[0] <= 0:
        return None
    return next(
        (step for step, lr in enumerate(lrs) if lr < DECAYED * lrs[0]),
        None,
    )


def _decayed(evidence: Evidence, step: int) -> Diagnosis:
    lrs = evidence.lrs
    return Diagnosis(
        CODE,
        f"the learning rate decays to nothing: {evidence.scheduler} takes it from"
        f" {lrs[0]:g} to {lrs[step]:g} by step {step}",
        [
            f"lr {lrs[0]:g} at step 0, {lrs[step]:g} at step {step},"
            f" {lrs[-1]:g} at the end",
            f"the loss went from {evidence.losses[0]:.4g} to"
            f" {evidence.losses[-1]:.4g}; the target is {evidence.target:.4g}",
            f"optimizer {_recipe(evidence)}",
        ],
        [
            f"check {evidence.scheduler}'s settings (step size, gamma, total steps):"
            " the lr should stay useful for the whole of training",
            CHECK_RECIPE,
        ],
    )


def _origin(evidence: Evidence) -> list[str]:
    if (
        evidence.optimizer_source.startswith("built-in")
        or not evidence.optimizer_source
    ):
        return []
    return [f"optimizer {_recipe(evidence)}"]


def _recipe(evidence: Evidence) -> str:
    scheduler = f" with {evidence.scheduler}" if evidence.scheduler else ""
    name = evidence.optimizer or "optimizer"
    text = f"{name}{scheduler} (from {evidence.optimizer_source or 'the gate'})"
    if evidence.scheduler and evidence.configured_lr != evidence.lr:
        text += f": lr {evidence.configured_lr:g}, {evidence.lr:g} at the first step"
    return text


def _where(evidence: Evidence) -> str:
    if evidence.optimizer_source.startswith("built-in"):
        return " (lr in [tool.mlsmoke.overfit])"
    return f" in {evidence.optimizer_source or 'the optimizer'}"
