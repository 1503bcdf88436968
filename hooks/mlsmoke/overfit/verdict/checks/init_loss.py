"""``init-loss``: for a C-class cross-entropy, the loss at init is far from -log(1/C),
which points to a bad init or the wrong loss (Karpathy's first check)."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "init-loss"
# Softmax over C classes at a sane init gives about log(C); a little off is normal.
LOW, HIGH, SLACK = 0.6, 1.6, 0.3


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
    """C, when the batch holds class indices that index the model's C logits."""
    capture = forward_probes.capture_forward(run)
    if capture is None:
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
    return classes
