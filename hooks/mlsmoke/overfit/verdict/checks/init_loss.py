"""``init-loss``: for a C-class cross-entropy, the loss at init is far from -log(1/C),
which points to a bad init or the wrong loss (Karpathy's first check).

It warns only where the loss is shown to be a plain cross-entropy: recomputed from the
logits and class targets found, it matches the model's own loss (up to its sign). A
loss with other terms (cross-entropy plus a KL term, an auxiliary loss) has another
expected value at init, and gets no warning.
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


def check(run: GateRun) -> list[Warning]:
    losses = run.evidence.losses
    if not losses or not math.isfinite(losses[0]):
        return []
    classes = class_count(run)
    if classes is None:
        return []
    expected = math.log(classes)
    if not is_far(losses[0], expected):
        return []
    return [
        Warning(
            CODE,
            f"the loss at init is {losses[0]:.4g}, far from -log(1/{classes}) ="
            f" {expected:.4g} for a {classes}-class cross-entropy: check that the"
            " inputs are normalized, the init of the last layer (too large weights"
            " make confident wrong guesses), and that the loss is the intended one",
        )
    ]


def is_far(initial: float, expected: float) -> bool:
    """Whether an initial loss is far from the ``expected`` log(C)."""
    if abs(initial - expected) <= SLACK:
        return False
    return not (LOW * expected <= initial <= HIGH * expected)


def class_count(run: GateRun) -> int | None:
    """C, when the batch holds class indices that index the model's C logits and the
    loss is their plain cross-entropy."""
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
    if not is_cross_entropy(capture.loss, logits, targets):
        return None
    return classes


def is_cross_entropy(loss: float, logits: torch.Tensor, targets: torch.Tensor) -> bool:
    """Whether ``loss`` is (plus or minus) the mean cross-entropy of ``logits`` and
    ``targets``, as given or shifted by one position (a causal LM's next token)."""
    return any(
        math.isclose(abs(loss), value, rel_tol=RTOL, abs_tol=ATOL)
        for value in _cross_entropies(logits.detach().float(), targets)
    )


def _cross_entropies(logits: torch.Tensor, targets: torch.Tensor) -> list[float]:
    pairs = [(logits, targets)]
    if logits.dim() == 3 and logits.shape[1] > 1:
        pairs.append((logits[:, :-1], targets[:, 1:]))
    values = []
    for scores, labels in pairs:
        flat_scores = scores.reshape(-1, scores.shape[-1])
        flat_labels = labels.reshape(-1).long()
        values.append(float(F.cross_entropy(flat_scores, flat_labels)))
    return values
