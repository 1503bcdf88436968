"""``init-loss``: for a C-class cross-entropy, the loss at init is far from -log(1/C),
which points to a bad init or the wrong loss (Karpathy's first check).

It warns only where the loss is shown to be the C-class cross-entropy of the logits
and class targets found: recomputed from them, it matches the model's own loss, up to
its sign, as built or with the usual slips (nll_loss on raw logits or on
probabilities), which the warning names. A loss with other terms (cross-entropy plus a
KL term, an auxiliary loss) has another expected value at init, and gets no warning.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "init-loss"
# Softmax over C classes at a sane init gives about log(C); a little off is normal.
LOW, HIGH, SLACK = 0.6, 1.6, 0.3
# How close a recomputed cross-entropy must be to the model's loss to be the same.
RTOL, ATOL = 1e-3, 1e-4
NEGATED = ", negated"


def check(run: GateRun) -> list[Warning]:
    losses = run.evidence.losses
    if not losses or not math.isfinite(losses[0]):
        return []
    found = class_count(run)
    if found is None:
        return []
    classes, kind = found
    expected = math.log(classes)
    if not is_far(losses[0], expected):
        return []
    if kind.endswith(NEGATED):
        return [
            Warning(
                CODE,
                f"the loss at init is {losses[0]:.4g}: the {classes}-class"
                f" cross-entropy ({kind}) with its sign flipped, so minimizing it"
                " makes the predictions worse; return the cross-entropy itself",
            )
        ]
    return [
        Warning(
            CODE,
            f"the loss at init is {losses[0]:.4g}, far from -log(1/{classes}) ="
            f" {expected:.4g} for a {classes}-class cross-entropy ({kind}): check"
            " that the inputs are normalized, the init of the last layer (too large"
            " weights make confident wrong guesses), and that the loss is the"
            " intended one",
        )
    ]


def is_far(initial: float, expected: float) -> bool:
    """Whether an initial loss is far from the ``expected`` log(C)."""
    if abs(initial - expected) <= SLACK:
        return False
    return not (LOW * expected <= initial <= HIGH * expected)


def class_count(run: GateRun) -> tuple[int, str] | None:
    """C, and what the loss was shown to be, when the batch holds class indices that
    index the model's C logits and the loss is their cross-entropy."""
    capture = forward_probes.capture_forward(run)
    if capture is None or capture.loss is None:
        return None
    logits = forward_probes.class_logits(capture)
    if logits is None or logits.dim() < 2 or logits.shape[-1] < 2:
        return None
    targets = forward_probes.class_targets(capture.batch, logits)
    if targets is None:
        return None
    classes = int(logits.shape[-1])
    valid = targets[targets != -100]
    if valid.numel() == 0 or int(valid.min()) < 0 or int(valid.max()) >= classes:
        return None
    kind = cross_entropy_kind(capture.loss, logits, targets)
    return None if kind is None else (classes, kind)


# The cross-entropy as built, and its usual slips, from (N, C) scores and (N,) targets.
_KINDS = {
    "cross_entropy on the logits": lambda s, t: F.cross_entropy(s, t),
    "nll_loss on raw logits, log_softmax forgotten": lambda s, t: F.nll_loss(s, t),
    "nll_loss on probabilities, softmax where log_softmax was meant": (
        lambda s, t: F.nll_loss(s.softmax(-1), t)
    ),
}


def cross_entropy_kind(
    loss: float, logits: torch.Tensor, targets: torch.Tensor
) -> str | None:
    """Which cross-entropy of ``logits`` and ``targets`` ``loss`` is (up to its sign;
    as given, or shifted by one position for a causal LM), or None when it is none
    of them: a loss with other terms."""
    for scores, labels in _alignments(logits.detach().float(), targets):
        for kind, compute in _KINDS.items():
            value = float(compute(scores, labels))
            if math.isclose(abs(loss), abs(value), rel_tol=RTOL, abs_tol=ATOL):
                return kind if loss * value >= 0 else f"{kind}{NEGATED}"
    return None


def is_cross_entropy(loss: float, logits: torch.Tensor, targets: torch.Tensor) -> bool:
    return cross_entropy_kind(loss, logits, targets) is not None


def _alignments(
    logits: torch.Tensor, targets: torch.Tensor
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    pairs = [(logits, targets)]
    if logits.dim() == 3 and logits.shape[1] > 1:
        pairs.append((logits[:, :-1], targets[:, 1:]))
    return [
        (scores.reshape(-1, scores.shape[-1]), labels.reshape(-1).long())
        for scores, labels in pairs
    ]
