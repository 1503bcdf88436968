"""``label-range-error``: class targets outside the model's output range, such as
labels 0..2 for a model built with 2 logits, or a value outside the support of the
distribution a loss scores it with. The values say so, whatever the error's words (a
project's own check, worded in any language, or none): the failing frame or the batch
holds class indices beyond the output's width with shapes that agree, or a value its
distribution's support refuses. torch's own messages for it are read too. On CUDA this
surfaces as a device-side assert; a CPU re-run finds the real line."""

from __future__ import annotations

import re
from typing import Any

import torch

from mlsmoke.overfit.training.evidence import DEVICE_ASSERT, Evidence
from mlsmoke.overfit.verdict import batch_probes, forward_probes, probes, target_reach
from mlsmoke.overfit.verdict.diagnoses import _errors, _field_values, _step_evidence
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "label-range-error"


# The hints follow the loss that raised: one that takes class indices (cross_entropy,
# nll_loss), per sample or per position (tokens, pixels), or a binary one.
CLASS_SUGGESTIONS = [
    "build the model with as many outputs as classes (num_labels = the number of"
    " distinct labels)",
    "map labels to 0..C-1 (no 1-based labels, no -1 except an ignore_index)",
]
TOKEN_SUGGESTIONS = [
    "build the model with as many outputs as the tokenizer has tokens (vocab_size ="
    " len(tokenizer), or model.resize_token_embeddings(len(tokenizer)))",
    "mark positions without a target with the loss's ignore_index (-100), not -1 or"
    " an id past the vocabulary",
]
BINARY_SUGGESTIONS = [
    "binary losses (binary_cross_entropy, BCEWithLogitsLoss) take targets in [0, 1]:"
    " 0/1 labels or probabilities, as floats",
    "for more than two classes, use cross_entropy with class indices 0..C-1",
]
BINARY_MESSAGE = "all elements of target should be between 0 and 1"
_TARGET_VALUE = r"Target (-?\d+) is out of bounds"

# torch's own words for a target out of range, read besides the values: a device-side
# assert's CPU re-run raises them where no frame holds the targets. A binary loss's
# [0, 1] is words only: a float target outside [0, 1] is wrong for that loss alone
# (an MSE takes any), and no tensor tells which loss ran.
_MESSAGES = (
    "is out of bounds",
    "t >= 0 && t < n_classes",
    "cur_target >= 0 && cur_target < n_classes",
    BINARY_MESSAGE,
)


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence, lines = run.evidence, []
    if evidence.cuda_error == DEVICE_ASSERT and evidence.rerun_of is None:
        cpu = probes.on_cpu(run)
        lines.append(
            f"on {evidence.device}: {_errors.first_line(evidence)}; re-run on the CPU,"
            " where the error raises at its real line"
        )
        evidence = cpu
    elif evidence.rerun_of is not None:
        lines.append(
            f"on {evidence.rerun_of.device}: a device-side assert; the CPU re-run"
            " raised the error below"
        )
    if not _errors.is_torch_error(evidence):
        return None
    outside = None
    if _errors.raised_in_forward(evidence):
        outside = _step_evidence.values_outside(run)
    if outside is None and not _errors.mentions(evidence, _MESSAGES):
        return None
    if _ids_not_targets_beyond(run, evidence):
        return None
    lines.append(f"{_errors.where(evidence)} raised {_errors.raised(evidence)}")
    if outside is not None:
        lines.append(outside.describe())
    outputs, label_line = _ranges(run, evidence)
    lines += label_line
    summary = "class targets fall outside the model's output range"
    if outside is not None and outside.support:
        summary = "target values fall outside the support of the loss's distribution"
    elif outputs is not None:
        summary += f" ({outputs} outputs)"
    if evidence.user_traceback:
        lines.append(evidence.user_traceback)
    return Diagnosis(CODE, summary, lines, suggestions(run, evidence))


def suggestions(run: GateRun, evidence: Evidence) -> list[str]:
    """The hints for the loss that raised: a binary loss's targets, or class indices
    per sample, or per position (a language model's tokens)."""
    if _errors.mentions(evidence, (BINARY_MESSAGE,)):
        return BINARY_SUGGESTIONS
    if _per_position(run, evidence):
        return TOKEN_SUGGESTIONS
    return CLASS_SUGGESTIONS


def _per_position(run: GateRun, evidence: Evidence) -> bool:
    """The out-of-range targets sit in a field with a target per position (B, T, ...):
    of the fields holding the value the error names (any, when it names none), one
    named as targets, else the last."""
    found = re.search(_TARGET_VALUE, _errors.message(evidence))
    integers = [
        (name, value)
        for name, value in batch_probes.shared_fields(run)
        if isinstance(value, torch.Tensor)
        and not (value.is_floating_point() or value.is_complex())
        and value.dtype != torch.bool
        and value.numel()
    ]
    if found is not None:
        value = int(found.group(1))
        integers = [(n, v) for n, v in integers if bool((v == value).any())]
    reach = target_reach.class_target_reach(run)
    reached = [v for n, v in integers if reach.is_class_target(n, v, None)]
    named = [v for n, v in integers if _field_values.is_target_name(n)]
    # inputs come first in a tuple batch and may hold the same number (a token id)
    held = reached[:1] or named[:1] or [v for _, v in integers][-1:]
    return bool(held) and held[0].dim() >= 2


def _ids_not_targets_beyond(run: GateRun, evidence: Evidence) -> bool:
    """An index past a table's rows that only input fields (token or position ids)
    reach: the inputs are out of range, not the targets (data-error says so)."""
    found = _errors.index_beyond(evidence)
    if found is None:
        return False
    fields = batch_probes.shared_fields(run)
    beyond = _field_values.fields_beyond(fields, found[1])
    return bool(beyond) and not any(
        _field_values.is_target_name(name) for name, _ in beyond
    )


def _ranges(run: GateRun, evidence: Evidence) -> tuple[int | None, list[str]]:
    capture = forward_probes.capture_forward(run)
    outputs = capture.last_layer_outputs if capture is not None else None
    if outputs is None:  # a check raised before any layer ran: the model's head
        outputs = _step_evidence.output_of(run).width
    lines = []
    if outputs is not None:
        lines.append(
            f"the model's last layer has {outputs} outputs: classes 0..{outputs - 1}"
        )
    found = re.search(_TARGET_VALUE, _errors.message(evidence))
    if found:
        lines.append(f"a target holds {found.group(1)}")
    for name, value in _target_fields(run, outputs):
        lines.append(f"batch field {name}: {batch_probes.describe_value(value)}")
    return outputs, lines


def _target_fields(run: GateRun, outputs: int | None) -> list[tuple[str, Any]]:
    """The integer fields that reach the loss or the output's last dimension; every
    integer field when the trace shows none (a step that raised before any use)."""
    integers = [
        (name, value)
        for name, value in batch_probes.shared_fields(run)
        if _field_values.is_integer_tensor(value) and value.numel()
    ]
    reach = target_reach.class_target_reach(run)
    reached = [(n, v) for n, v in integers if reach.is_class_target(n, v, outputs)]
    return reached or integers
