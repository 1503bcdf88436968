"""The lowest loss a batch allows: class targets that its inputs do not decide.

Target positions a model sees alike but that hold different classes cannot all be
predicted: the best any model does there is the share of each class among them. A
language model whose sequences all open with one start token guesses each sequence's
first token from that token alone, so the batch's mean cross-entropy cannot fall
below the entropy of those guesses, however long it trains.

What a model sees at a position is what it is shown to read (``reading_window.py``,
by intervention in the model the gate trained, or a fresh one): the prefix up to the
position, and the position, for a model whose outputs stay as they were when later
inputs change; only the window of trailing positions its outputs read, where one
is measured; and not the position, where the inputs shifted one position on give the
same outputs one position on (a bigram table reads one token, at any position).
Views coarser than the prefix are taken only from a model each trainable weight of
which had a gradient, not zero, at the first backward; weights that take no part say
the model reads less than it was built to, and it is judged by the prefix.

The floor is computed only where the gate's loss is shown to be the mean cross-entropy
of the logits and class targets found (negative targets ignored), and only for a model
shown to read prefixes. That floor is the model's structure; identical whole samples
under two labels are the data's mistake, and the gate still fails on them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import NamedTuple

import torch

from mlsmoke.overfit.training.batch_objects import converted
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import forward_probes, reading_window
from mlsmoke.overfit.verdict.batch_probes import batch_fields
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember
from mlsmoke.overfit.verdict.reading_window import Reading
from mlsmoke.overfit.verdict.sequence_probes import (
    aligned,
    eval_logits,
    trained_or_fresh,
)


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
    inputs: list[torch.Tensor], targets: torch.Tensor, reading: Reading | None
) -> tuple[list[tuple], list[int]]:
    """Each kept (non-negative) target's view and class. A target of shape (B,) sees
    its sample's inputs; one of shape (B, T) its position too, and with a ``reading``
    only each input's row within the window that ends at that position (the prefix
    where the window is longer or None; inputs without that position: whole), and
    its position only where ``reading`` says the position is read."""
    views, classes = [], []
    rows = [_rows(tensor) for tensor in inputs]
    for index in torch.nonzero(targets >= 0).tolist():
        sample, position = index[0], tuple(index[1:])
        seen = []
        for tensor, row in zip(inputs, rows):
            if reading is not None and position and aligned(tensor, targets):
                window = tensor[
                    sample, _first_read(reading, position[0]) : position[0] + 1
                ]
                seen.append(tuple(window.reshape(-1).tolist()))
            else:
                seen.append(row[sample])
        where = position if reading is None or reading.positional else None
        views.append((where, *seen))
        classes.append(int(targets[tuple(index)]))
    return views, classes


def _first_read(reading: Reading, position: int) -> int:
    """The first position the output at ``position`` reads: a window shorter at the
    start holds fewer positions, so its view stays apart from the full ones."""
    return 0 if reading.window is None else max(0, position - reading.window + 1)


class Floor(NamedTuple):
    loss: float  # the least mean cross-entropy of the batch
    reading: Reading  # what the model is shown to read, that the views hold


def batch_floor(run: GateRun) -> Floor | None:
    """The floor of the gate's batch for what the model reads (memoized); None where
    the loss is not shown to be the cross-entropy of the targets found, or the model
    is not shown to read only up to each position."""
    return remember(run, "target-ambiguity-floor", lambda: _floor(run))


def _floor(run: GateRun) -> Floor | None:
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
    reading = _reading(run, capture, targets) if targets.dim() == 2 else None
    if reading is None:
        return None  # whole samples alike under two labels: the data's own mistake
    if reading.window is not None and not _every_weight_takes_part(run.evidence):
        reading = reading_window.PREFIXES
    inputs = [value for _, value in fields if value is not targets]
    views, classes = kept_views(inputs, targets, reading)
    return Floor(ambiguity_floor(views, classes), reading)


def _reading(
    run: GateRun, capture: forward_probes.ForwardCapture, targets: torch.Tensor
) -> Reading | None:
    """What the model's output at each position reads, shown by changing the inputs
    aligned with the targets."""
    model = trained_or_fresh(run, capture)
    aligned_ids = {
        id(value)
        for _, value in batch_fields(capture.batch)
        if value is not targets and aligned(value, targets)
    }
    if model is None or not aligned_ids:
        return None

    def outputs(edit: reading_window.Edit) -> torch.Tensor | None:
        def change(tensor: torch.Tensor) -> torch.Tensor:
            return edit(tensor) if id(tensor) in aligned_ids else tensor

        return eval_logits(run, model, converted(capture.batch, change, []))

    return reading_window.measured_reading(outputs, targets.shape[1])


def _every_weight_takes_part(evidence: Evidence) -> bool:
    """Whether every trainable parameter had a gradient, not zero, at the first
    backward. Weights that take no part (blocks forward never calls, an attention
    that sees only its own position) say the model reads less than it was built to:
    the window it reads then is no evidence of its design."""
    trainable = [name for name, grad in evidence.requires_grad.items() if grad]
    return bool(trainable) and all(evidence.first_grads.get(n) for n in trainable)


def _rows(tensor: torch.Tensor) -> list[tuple]:
    return [tuple(row.reshape(-1).tolist()) for row in tensor.detach().cpu()]
