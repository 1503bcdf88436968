"""The lowest loss a batch allows: class targets that its inputs do not decide.

Target positions a model sees alike (the same inputs; for a model whose output at a
position is shown to depend only on the inputs up to it, the same prefix at the same
position) but that hold different classes cannot all be predicted: the best any model
does there is the share of each class among them. A language model whose sequences
all open with one start token guesses each sequence's first token from that token
alone, so the batch's mean cross-entropy cannot fall below the entropy of those
guesses, however long it trains.

The floor is computed only where the gate's loss is shown to be the mean cross-entropy
of the logits and class targets found (negative targets ignored), and only for a model
shown to read prefixes: changing every later position of the inputs leaves each
earlier output as it was, in the model the gate trained (or a fresh one), while the
later outputs move. That floor is the model's structure; identical whole samples
under two labels are the data's mistake, and the gate still fails on them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import torch

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import batch_fields
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember
from mlsmoke.overfit.verdict.sequence_probes import (
    aligned,
    changed_after,
    eval_logits,
    trained_or_fresh,
)

# An output that moved less than this share of its largest value did not move.
UNMOVED = 1e-5


def ambiguity_floor(views: list[tuple], classes: list[int]) -> float:
    """The least mean cross-entropy over ``classes`` of a model whose prediction for
    each is a function of its view: a group of equal views is best served by the
    share of each class in it."""
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for view, label in zip(views, classes):
        groups[view][label] += 1
    total = 0.0
    for counts in groups.values():
        size = sum(counts.values())
        total -= sum(count * math.log(count / size) for count in counts.values())
    return total / len(classes) if classes else 0.0


def kept_views(
    inputs: list[torch.Tensor], targets: torch.Tensor, prefixes: bool
) -> tuple[list[tuple], list[int]]:
    """Each kept (non-negative) target's view and class. A target of shape (B,) sees
    its sample's inputs; one of shape (B, T) also its position, and with ``prefixes``
    only each input's row up to that position (inputs without that position: whole)."""
    views, classes = [], []
    rows = [_rows(tensor) for tensor in inputs]
    for index in torch.nonzero(targets >= 0).tolist():
        sample, position = index[0], tuple(index[1:])
        seen = []
        for tensor, row in zip(inputs, rows):
            if prefixes and position and aligned(tensor, targets):
                seen.append(
                    tuple(tensor[sample, : position[0] + 1].reshape(-1).tolist())
                )
            else:
                seen.append(row[sample])
        views.append((position, *seen))
        classes.append(int(targets[tuple(index)]))
    return views, classes


def batch_floor(run: GateRun) -> float | None:
    """The floor of the gate's batch for a model that reads prefixes (memoized); None
    where the loss is not shown to be the cross-entropy of the targets found, or the
    model is not shown to read only up to each position."""
    return remember(run, "target-ambiguity-floor", lambda: _floor(run))


def _floor(run: GateRun) -> float | None:
    capture = forward_probes.capture_forward(run)
    if capture is None or capture.loss is None:
        return None
    logits = forward_probes.class_logits(capture)
    if logits is None or logits.dim() not in (2, 3) or logits.shape[-1] < 2:
        return None
    targets = forward_probes.class_targets(capture.batch, logits)
    if targets is None or not forward_probes.is_mean_cross_entropy(
        capture.loss, logits, targets
    ):
        return None
    fields = [(name, value) for name, value in batch_fields(capture.batch)]
    if not all(isinstance(value, torch.Tensor) for _, value in fields):
        return None  # a field no tensor comparison can read
    if targets.dim() != 2 or not _sees_prefixes(run, capture, targets):
        return None  # whole samples alike under two labels: the data's own mistake
    inputs = [value for _, value in fields if value is not targets]
    views, classes = kept_views(inputs, targets, prefixes=True)
    return ambiguity_floor(views, classes)


def _sees_prefixes(
    run: GateRun, capture: forward_probes.ForwardCapture, targets: torch.Tensor
) -> bool:
    """Whether the model's output at each position stays as it was when every later
    position of the inputs aligned with the targets changes, and later outputs move:
    checked at the first position and the middle one."""
    model = trained_or_fresh(run, capture)
    length = targets.shape[1]
    aligned_inputs = [
        value
        for _, value in batch_fields(capture.batch)
        if value is not targets and aligned(value, targets)
    ]
    if model is None or length < 2 or not aligned_inputs:
        return False
    before = eval_logits(run, model, capture.batch)
    for cut in sorted({1, length // 2}):
        after = eval_logits(
            run, model, changed_after(capture.batch, aligned_inputs, cut)
        )
        if before is None or after is None or after.shape != before.shape:
            return False
        scale = UNMOVED * (1.0 + float(before.abs().max()))
        earlier = float((after[:, :cut] - before[:, :cut]).abs().max())
        later = float((after[:, cut:] - before[:, cut:]).abs().max())
        if earlier > scale or later <= 100 * scale:
            return False
    return True


def _rows(tensor: torch.Tensor) -> list[tuple]:
    return [tuple(row.reshape(-1).tolist()) for row in tensor.detach().cpu()]
