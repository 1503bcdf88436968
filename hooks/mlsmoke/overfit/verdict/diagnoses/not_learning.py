"""``not-learning``: the loss plateaus, or levels off at a floor above the target, no
learning rate in the range test helps, and gradients flow. Gives the floor's value and
its usual causes, gradient-norm evidence (vanishing gradients, dead units), and the
field guide's suggestions."""

from __future__ import annotations

import math

import torch

from mlsmoke.listing import first_few
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import (
    batch_probes,
    curve,
    curve_measures,
    dropout,
    forward_probes,
    lr_range,
    probes,
)
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.diagnoses._stalled import stalled_above_target
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import drop_dropout, no_label_smoothing
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "not-learning"
VANISHING = 1e-6
STRONG_WEIGHT_DECAY = 1.0
STRONG_DROPOUT = 0.5  # a rate at which one batch may never be learned
SAME_OUTPUT = 1e-6  # relative spread of outputs across samples that counts as none

SUGGESTIONS = [
    "check that the loss is the right one for the task and the targets",
    "look for regularization that is too strong (weight decay, penalties, label"
    " smoothing, dropout)",
    "check the init: dead ReLUs (large negative biases), saturated sigmoid/tanh,"
    " missing normalization in deep stacks",
    "check that labels and inputs are aligned and the model can represent the batch",
]
FLOOR_SUGGESTIONS = [
    "a floor comes from the objective, not the step budget: more steps will not"
    " reach the target",
    "probabilities given to a loss that expects logits (softmax applied twice:"
    " cross_entropy already applies log_softmax)",
    "label smoothing, or a strong regularizer (weight decay, a penalty term) that"
    " the data term cannot outweigh",
    "a bounded output (sigmoid, tanh, clamp) that cannot reach the targets' range",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    reading = stalled_above_target(run)
    if reading is None:
        return None
    evidence = run.evidence
    blind = blind_to_inputs(run)
    lines = [reading.reason] + blind + gradient_lines(evidence)
    tried = lr_range.lr_range_test(run).probes
    lines += [probes.describe_lr_result(probe) for probe in tried]
    helps = "and no learning rate probed helps" if tried else "(no lr probed)"
    decay = _strong_weight_decay(evidence)
    if reading.shape == curve.FLOOR:
        return Diagnosis(
            CODE,
            f"the loss levels off at a floor of {reading.floor:.4g}, above the target"
            f" {evidence.target:.4g}, {helps}",
            lines + decay,
            _see_inputs(blind)
            + _lower_decay(decay)
            + FLOOR_SUGGESTIONS
            + SUGGESTIONS[2:],
        )
    level = curve_measures.tail_level(evidence.losses)
    return Diagnosis(
        CODE,
        f"the loss plateaus at {level:.4g} above the target"
        f" {evidence.target:.4g}, {helps}",
        lines + decay,
        _see_inputs(blind) + _lower_decay(decay) + SUGGESTIONS,
    )


def _strong_weight_decay(evidence: Evidence) -> list[str]:
    """The optimizer's weight decay, where it is strong enough to hold the weights
    near 0 against the data term (0.01 to 0.1 is usual)."""
    if evidence.weight_decay < STRONG_WEIGHT_DECAY:
        return []
    decay = f"{evidence.weight_decay:g}"
    return [
        f"the optimizer {evidence.optimizer} has weight_decay {decay}, strong enough"
        " to pull the weights toward 0 faster than the loss can move them"
    ]


def _lower_decay(decay_lines: list[str]) -> list[str]:
    if not decay_lines:
        return []
    return ["lower weight_decay to the usual 0.01 to 0.1 (AdamW) or 1e-4 (SGD)"]


@diagnoser(CODE)
def diagnose_dropout(run: GateRun) -> Diagnosis | None:
    """Strong dropout is on, and the same run without it memorizes: the noise it
    adds, not the model or the lr, keeps the batch from being learned. Asked before
    the lr range test, which a run that memorizes without dropout then skips."""
    if not run.evidence.stopped_short():
        return None
    active = dropout.active_dropout(run.evidence)
    if not any(p >= STRONG_DROPOUT for _, p in active) or not probes.may_probe(run):
        return None
    outcome = drop_dropout.check(run)
    free = outcome.probe
    if free is None or not outcome.memorized:
        return None
    rates = first_few([f"{name} (p={p:g})" for name, p in active], 4)
    evidence = run.evidence
    return Diagnosis(
        CODE,
        f"dropout keeps the model from memorizing: with every dropout at p = 0 the"
        f" batch is memorized in {free.steps} steps",
        [
            f"the loss went from {evidence.losses[0]:.4g} to {evidence.losses[-1]:.4g}"
            f" in {evidence.steps} steps with dropout on",
            f"dropout modules: {rates}",
            f"without dropout: memorized in {free.steps} steps",
            *(
                [
                    f"in eval mode the batch's loss is {evidence.eval_loss:.4g}, above"
                    f" the target {evidence.target:.4g}: not learned even without the"
                    " noise"
                ]
                if evidence.eval_loss is not None
                else []
            ),
        ],
        [
            "lower the dropout rate (0.1 is usual; 0.5 and above rarely trains well)"
            f"  {outcome.mark()}",
            "build the gate's model with dropout 0, and regularize once it memorizes",
        ],
    )


@diagnoser(CODE)
def diagnose_label_smoothing(run: GateRun) -> Diagnosis | None:
    """The loss levels off above the target, the loss smooths its labels, and the
    same run with label smoothing off memorizes: a smoothed target's cross-entropy
    cannot fall below its entropy. Asked before the lr range test, which it spares."""
    reading = stalled_above_target(run)
    if reading is None:
        return None
    evidence = run.evidence
    smoothing = no_label_smoothing.smoothing_used(run)
    if smoothing <= 0:
        return None
    outcome = no_label_smoothing.check(run)
    if not outcome.memorized:
        return None
    return Diagnosis(
        CODE,
        f"label smoothing {smoothing:g} keeps the loss above the target"
        f" {evidence.target:.4g}: {outcome.result()}",
        [
            reading.reason,
            f"cross_entropy is called with label_smoothing={smoothing:g}: the smoothed"
            " targets' entropy is a floor the loss cannot pass",
        ],
        [
            "run the gate with label_smoothing=0, and smooth once the model memorizes"
            f"  {outcome.mark()}",
            "or set the target above the smoothed floor (target-loss)",
        ],
    )


def blind_to_inputs(run: GateRun) -> list[str]:
    """Evidence that the model does not see its inputs: at init its output is the
    same for every sample, so the best it can learn is the labels' average; and
    the mask fields (integers or booleans) that hold nothing but 0."""
    capture = forward_probes.capture_forward(run)
    if capture is None:
        return []
    logits = forward_probes.class_logits(capture)
    if logits is None or logits.dim() < 2 or int(logits.shape[0]) < 2:
        return []
    logits = logits.detach().float()
    spread = float((logits - logits[:1]).abs().max())
    if spread > SAME_OUTPUT * max(float(logits.abs().max()), 1.0):
        return []
    lines = [
        "at init the model's output is the same for every sample: it does not see"
        " its inputs, so the most it can learn is the labels' average"
    ]
    for name, value in batch_probes.batch_fields(capture.batch):
        if "mask" in name.lower() and _all_zero(value):  # token_type_ids are 0 too
            lines.append(f"batch field {name} is all 0: a mask that hides every input")
    return lines


def _see_inputs(blind: list[str]) -> list[str]:
    if not blind:
        return []
    return [
        "check that the inputs reach the model: an attention or padding mask that"
        " hides every position, inputs zeroed or detached from the batch, a forward"
        " that ignores an argument"
    ]


def _all_zero(value: object) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and not value.is_floating_point()
        and value.numel() > 0
        and not bool(value.any())
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
        shown = first_few(dead, 6)
        lines.append(f"zero gradient at the first step (dead units upstream): {shown}")
    return lines
