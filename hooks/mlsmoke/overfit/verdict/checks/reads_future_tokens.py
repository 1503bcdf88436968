"""``reads-future-tokens``: the loss scores the output at each position against the
next input (a next-token objective), and that output moves when only later inputs
change. The output at position i reads input i+1, which is its own target: the model
memorizes the batch by copying the answer (a causal mask removed or never applied),
and the gate's pass proves nothing.

Two pieces of evidence, the second looked for only when the first holds:

- next-token targets: a class-target field of shape (B, T) equals an input field of
  the same shape one position on (``targets[:, i] == inputs[:, i + 1]``) at nearly
  every kept position (negative targets ignored), and not at the same position
  (constant rows would match both ways); or it equals the input where kept, and the
  gate's loss on a fresh model is the cross-entropy of the outputs before the last
  against the targets after the first, clearly closer to it than to the unshifted
  one (a Hugging Face causal LM shifts its labels itself);
- intervention: in eval mode, on the model the gate trained (script mode keeps it) or
  a fresh one, the input field is changed from the middle of the sequence on; outputs
  before the middle that move, well above the noise of two identical runs, read the
  future. A causal model leaves them as they were. Three forwards.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from mlsmoke.overfit.training.batch_objects import named_tensors
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.checks.batch_mixing import NOISY_EVAL, moved, noise_floor
from mlsmoke.overfit.verdict.checks.target_copies_input import (
    equal_fields,
    field_label,
)
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning
from mlsmoke.overfit.verdict.sequence_probes import (
    aligned,
    changed_after,
    eval_logits,
    trained_or_fresh,
)

CODE = "reads-future-tokens"
# The share of kept positions whose target is the next input: next-token targets.
SHIFTED = 0.95
# Fewer compared positions than this could match by chance.
MIN_POSITIONS = 4
# A loss this many times closer to one cross-entropy than to another is that one.
CLEARLY_CLOSER = 10.0

CAUSES = (
    "look for a causal mask removed or not applied: is_causal=False in"
    " scaled_dot_product_attention, a masked_fill with the tril buffer deleted or"
    " its result unused, attention or pooling over the whole sequence, or tokens"
    " reordered along it (a view or reshape where a transpose was meant)"
)


class NextTokenFields(NamedTuple):
    """An input field and the target field that holds its next token: one position
    on in the batch, or equal to it and shifted inside the loss."""

    inputs_name: str
    inputs: torch.Tensor
    targets_name: str
    targets: torch.Tensor
    shifted_by_the_loss: bool = False


def check(run: GateRun) -> list[Warning]:
    capture = forward_probes.capture_forward(run)
    logits = None if capture is None else forward_probes.class_logits(capture)
    if capture is None or logits is None:
        return []
    targets = forward_probes.class_targets(capture.batch, logits)
    fields = None if targets is None else next_token_fields(capture, logits, targets)
    model = None if fields is None else trained_or_fresh(run, capture)
    if fields is None or model is None:
        return []
    found = _position_reading_future(run, model, capture, fields)
    if found is None:
        return []
    position, cut = found
    return [_warning(run.evidence.pinned, fields, position, cut)]


def next_token_fields(
    capture: forward_probes.ForwardCapture, logits: torch.Tensor, targets: torch.Tensor
) -> NextTokenFields | None:
    """The input field whose next token the loss scores each output against: the
    targets are that input one position on, or equal to it where the loss is the
    cross-entropy of the outputs before the last against the targets after the first
    (a Hugging Face causal LM shifts its labels itself)."""
    if targets.dim() != 2 or targets.shape[1] < 2:
        return None
    named = named_tensors(capture.batch)
    targets_name = next((name for name, value in named if value is targets), None)
    if targets_name is None:
        return None
    for name, value in named:
        if value is not targets and _is_token_field(value, targets):
            if is_shifted_by_one(value, targets):
                return NextTokenFields(name, value, targets_name, targets)
    if capture.loss is None or not loss_shifts_targets(capture.loss, logits, targets):
        return None
    tensors = dict(named)
    for first, second in equal_fields(capture.batch):
        if targets_name in (first, second):
            name = second if first == targets_name else first
            return NextTokenFields(name, tensors[name], targets_name, targets, True)
    return None


def _is_token_field(value: torch.Tensor, targets: torch.Tensor) -> bool:
    if value.shape != targets.shape or value.dtype == torch.bool:
        return False
    return not (value.is_floating_point() or value.is_complex())


def loss_shifts_targets(
    loss: float, logits: torch.Tensor, targets: torch.Tensor
) -> bool:
    """The loss is the mean cross-entropy of the output at each position against the
    target one position on, and clearly closer to it than to the cross-entropy
    against the target at its own position (at init both are near log C)."""
    if logits.dim() != 3 or tuple(logits.shape[:2]) != tuple(targets.shape):
        return False
    shifted = forward_probes.mean_cross_entropy(logits[:, :-1], targets[:, 1:])
    own = forward_probes.mean_cross_entropy(logits, targets)
    if shifted is None or not math.isclose(
        loss,
        shifted,
        rel_tol=forward_probes.CROSS_ENTROPY_RTOL,
        abs_tol=forward_probes.CROSS_ENTROPY_ATOL,
    ):
        return False
    return own is None or CLEARLY_CLOSER * abs(loss - shifted) < abs(loss - own)


def is_shifted_by_one(inputs: torch.Tensor, targets: torch.Tensor) -> bool:
    """``targets[:, i] == inputs[:, i + 1]`` at nearly every kept (non-negative)
    target, and not ``targets[:, i] == inputs[:, i]``."""
    shifted = _share_equal(inputs[:, 1:], targets[:, :-1])
    unshifted = _share_equal(inputs, targets)
    return shifted is not None and shifted >= SHIFTED and (unshifted or 0.0) < SHIFTED


def _share_equal(inputs: torch.Tensor, targets: torch.Tensor) -> float | None:
    kept = targets >= 0
    count = int(kept.sum())
    if count < MIN_POSITIONS:
        return None
    return int((inputs[kept] == targets[kept]).sum()) / count


def _position_reading_future(
    run: GateRun,
    model: torch.nn.Module,
    capture: forward_probes.ForwardCapture,
    fields: NextTokenFields,
) -> tuple[int, int] | None:
    """``(position, cut)``: the last position before ``cut`` whose output moved when
    only the inputs from ``cut`` on changed; None when none did, or eval mode is too
    noisy to tell."""
    before = eval_logits(run, model, capture.batch)
    again = eval_logits(run, model, capture.batch)
    if before is None or again is None or again.shape != before.shape:
        return None
    if not aligned(before, fields.targets):
        return None  # outputs not one per position: no position to compare
    floor = noise_floor(before, again)
    if floor > NOISY_EVAL * float(before.abs().max()):
        return None
    cut = fields.targets.shape[1] // 2
    after = eval_logits(run, model, changed_after(capture.batch, [fields.inputs], cut))
    if after is None or after.shape != before.shape:
        return None
    reading = [k for k in range(cut) if moved(after[:, k], before[:, k], floor)]
    return (reading[-1], cut) if reading else None


def _warning(pinned: str, fields: NextTokenFields, position: int, cut: int) -> Warning:
    batch = pinned or "the batch"
    length = fields.targets.shape[1]
    targets = field_label(batch, fields.targets_name)
    inputs = field_label(batch, fields.inputs_name)
    found = f"the target {targets} is the input {inputs} one position on"
    if fields.shifted_by_the_loss:
        found = (
            f"the loss scores the output at each position against the next position"
            f" of the target {targets}, which holds the input {inputs}"
        )
    return Warning(
        CODE,
        f"{found} (next-token targets), and in eval mode the model's output at"
        f" position {position}"
        f" moved when only the inputs at positions {cut}..{length - 1} changed:"
        " the model reads the token it is asked to predict, so memorizing this batch"
        f" proves nothing; {CAUSES}",
    )
