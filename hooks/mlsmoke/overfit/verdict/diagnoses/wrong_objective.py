"""``wrong-objective``: the loss rises at every learning rate probed, or falls below
zero without bound: a flipped sign, a maximized quantity, or a loss given inputs it
does not expect (``nll_loss`` on raw logits). A loss below zero is a question, not a
success: whether it reached its target or started negative, the curve after is read,
and only one that levels off is bounded. A loss meant to go negative (a Gaussian NLL
with a learned variance) says so with a target-loss below zero. A flipped sign is
pointed at where the project's code negates the loss (``loss_negation.py``)."""

from __future__ import annotations

import dataclasses
import math
import re

from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.verdict import (
    curve,
    curve_measures,
    loss_negation,
    lr_range,
    probes,
)
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "wrong-objective"
# A negative initial loss cannot be scaled by target-ratio; the engine says so.
NEGATIVE_INITIAL = "target-ratio-undefined"
PROBE_STEPS = 30
# A loss that takes probabilities, in torch's words, given something else.
PROBABILITIES_EXPECTED = r"\binput\w* should be between 0 and 1"

SUGGESTIONS = [
    "check the sign of the loss: minimize cross-entropy, not its negative",
    "make sure the optimizer minimizes (no maximize=True, no gradient ascent)",
    "give the loss what it expects: nll_loss takes log-probabilities (log_softmax"
    " first), cross_entropy takes raw logits",
]
NEGATIVE_ALLOWED = (
    "if the loss is meant to go negative (a log-likelihood of continuous data), set"
    " an absolute target-loss below zero"
)


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    return _naming_the_negation(run, _diagnose(run))


def _naming_the_negation(run: GateRun, found: Diagnosis | None) -> Diagnosis | None:
    """A flipped sign, pointed at: the project's line that negates the loss."""
    if found is None or SUGGESTIONS[0] not in found.suggestions:
        return found
    where = loss_negation.negated_at(run)
    if where is None:
        return found
    others = [item for item in found.suggestions if item != SUGGESTIONS[0]]
    return dataclasses.replace(
        found,
        evidence=[f"the loss the gate minimizes is negated at {where}"]
        + found.evidence,
        suggestions=[f"minimize the loss itself, not its negative: {where}"] + others,
    )


def _diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if _errors.raised_in_forward(evidence) and re.search(
        PROBABILITIES_EXPECTED, _errors.message(evidence), re.IGNORECASE
    ):
        return _scores_for_probabilities(run)
    if negative_at_init(run):
        return _falls_without_bound(run)
    if evidence.bound_check_from is not None and evidence.error is None:
        return _fell_through_target(run)
    if not evidence.stopped_short(3):
        return None
    reading = curve.classify_curve(evidence.losses, evidence.target)
    if reading.shape == curve.UNBOUNDED_BELOW:
        return Diagnosis(
            CODE,
            "the loss falls below zero without bound: a flipped sign or a maximized"
            " quantity",
            [reading.reason],
            SUGGESTIONS + [NEGATIVE_ALLOWED],
        )
    if reading.shape not in (curve.RISING, curve.EXPLODING):
        return None
    sweep = [p for p in lr_range.lr_range_test(run).side(lr_range.DOWN) if _moved(p)]
    if not sweep or not all(_climbs(run, probe.losses) for probe in sweep):
        return None
    if _shape(run, sweep[-1].losses) == curve.EXPLODING:
        return None  # still exploding at the smallest lr: not a steady climb
    lines = [f"at lr {evidence.configured_lr:g}: {reading.reason}"]
    lines += [probes.describe_lr_result(probe) for probe in sweep]
    lrs = ", ".join(f"{lr:g}" for lr in [evidence.lr] + [p.lr for p in sweep])
    return Diagnosis(
        CODE,
        f"the loss rises at every learning rate probed ({lrs}): the optimizer climbs"
        " the loss instead of descending it",
        lines,
        SUGGESTIONS,
    )


def _scores_for_probabilities(run: GateRun) -> Diagnosis:
    evidence = run.evidence
    return Diagnosis(
        CODE,
        "the loss takes probabilities in [0, 1] and was given scores outside that"
        " range: raw logits where a sigmoid or softmax was meant, or the wrong loss",
        [f"{_errors.where(evidence)} raised {_errors.raised(evidence)}"]
        + ([evidence.user_traceback] if evidence.user_traceback else []),
        [
            "give raw logits to the loss that applies the sigmoid itself:"
            " binary_cross_entropy_with_logits (BCEWithLogitsLoss), or cross_entropy"
            " for classes",
            "or apply torch.sigmoid to the logits before binary_cross_entropy (less"
            " stable)",
        ],
    )


def _fell_through_target(run: GateRun) -> Diagnosis | None:
    """The loss reached its target below zero; the engine trained on to see a level."""
    evidence = run.evidence
    start = evidence.bound_check_from
    after = evidence.losses[start:]
    if probes.memorized(evidence):
        return None
    end = f"{after[-1]:.4g}" if math.isfinite(after[-1]) else f"{after[-1]}"
    return Diagnosis(
        CODE,
        f"the loss falls below zero without bound ({evidence.losses[0]:.4g} at init,"
        f" {end} {len(after) - 1} steps after reaching the target): not"
        " memorization, but a loss with no lower bound",
        [
            _reached(evidence) + f", then kept falling: {_sample(after)}",
            "a loss to minimize is bounded below, usually by 0",
        ],
        SUGGESTIONS + [NEGATIVE_ALLOWED],
    )


def _reached(evidence) -> str:
    reached = evidence.reached_at
    start = evidence.bound_check_from
    if reached is None or reached == start:
        return (
            f"it passed the target {evidence.target:.4g} at step {start} with"
            f" {evidence.losses[start]:.4g}"
        )
    return (
        f"it reached the target {evidence.target:.4g} at step {reached} with"
        f" {evidence.losses[reached]:.4g}, and fell below zero at step {start}"
    )


def _sample(values: list[float]) -> str:
    shown = values[:: max(1, len(values) // 5)][:6]
    return " -> ".join(f"{v:.4g}" for v in shown)


def _moved(probe) -> bool:
    losses = probe.losses
    if len(losses) < 3 or not math.isfinite(losses[-1]):
        return len(losses) >= 2
    return abs(losses[-1] - losses[0]) > 0.01 * max(abs(losses[0]), 1e-8)


def _shape(run: GateRun, losses: list[float]) -> str:
    return curve.classify_curve(losses, run.evidence.target).shape


def _climbs(run: GateRun, losses: list[float]) -> bool:
    """The loss ends above its start and never went meaningfully below it: ascent,
    however slow (at a small lr a climb is a plateau that tilts up)."""
    if len(losses) < 3 or losses[-1] <= losses[0]:
        return False
    finite = [v for v in losses if math.isfinite(v)]
    slack = 0.01 * curve_measures.loss_scale(losses, run.evidence.target)
    return min(finite) >= losses[0] - slack


def negative_at_init(run: GateRun) -> bool:
    """The loss was below 0 at init, so that a target-ratio of it means nothing."""
    error = run.evidence.error
    return (
        isinstance(error, ProjectProblem)
        and error.code == NEGATIVE_INITIAL
        and bool(run.evidence.losses)
        and run.evidence.losses[0] < 0  # a loss of exactly 0 is not negative
    )


def _falls_without_bound(run: GateRun) -> Diagnosis:
    """A negative loss at init under a target-ratio: the config expects a loss bounded
    below by 0, so it is the loss that is wrong, not the config. A short probe that no
    target stops tells a loss falling without bound from one with a negative floor."""
    initial = run.evidence.losses[0]
    probe = probes.without_target(run, PROBE_STEPS) if probes.may_probe(run) else None
    losses = [] if probe is None or probe.error is not None else probe.losses
    finite = [v for v in losses if math.isfinite(v)]
    suggestions = SUGGESTIONS + [NEGATIVE_ALLOWED + " instead of target-ratio"]
    bounded = "a loss to minimize is bounded below, usually by 0"
    if len(finite) < 4:
        return Diagnosis(
            CODE,
            f"the loss is negative at init ({initial:.4g}): a target-ratio expects a"
            " loss bounded below by 0",
            [bounded],
            suggestions,
        )
    moved = (
        f"in {probe.steps} steps at lr {probe.configured_lr:g} the loss went"
        f" {losses[0]:.4g}"
    )
    moved += f" -> {losses[-1]:.4g}"
    fell = finite[-1] < finite[0] - 0.01 * max(abs(finite[0]), 1e-8)
    if fell and not (len(finite) == len(losses) and curve_measures.levels_off(finite)):
        return Diagnosis(
            CODE,
            f"the loss is negative at init ({initial:.4g}) and falls without bound:"
            " a flipped sign or a maximized quantity",
            [moved, bounded],
            suggestions,
            losses=list(losses),  # the headline draws this run, not the 0-step main one
            steps=probe.steps,
        )
    return Diagnosis(
        CODE,
        f"the loss is negative at init ({initial:.4g}) and levels off near"
        f" {curve_measures.tail_level(finite):.4g}: not a loss bounded below by 0, as a"
        " target-ratio expects",
        [moved, bounded],
        [
            "nll_loss takes log-probabilities: given probabilities it is -p, bounded"
            " by -1 (use log_softmax, or cross_entropy on logits)",
            *suggestions,
        ],
        losses=list(losses),
        steps=probe.steps,
    )
