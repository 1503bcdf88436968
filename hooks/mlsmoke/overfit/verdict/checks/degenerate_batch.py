"""``degenerate-batch``: the batch holds a single class, the field guide's "data too
orderly" bug: sorted data gives single-class batches, and a model that memorizes one
learns nothing."""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.verdict import batch_probes, forward_probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "degenerate-batch"


def check(run: GateRun) -> list[Warning]:
    capture = forward_probes.capture_forward(run)
    if capture is None:
        return []
    name, targets = target_field(capture.batch, forward_probes.class_logits(capture))
    if targets is None:
        return []
    valid = targets[targets != -100]
    if valid.numel() < 2 or int(valid.min()) != int(valid.max()):
        return []
    return [
        Warning(
            CODE,
            f"every target in {name} is {int(valid.min())} ({valid.numel()} values):"
            " the batch holds a single class; shuffle the data, or build the gate's"
            " batch from several classes",
        )
    ]


def target_field(
    batch: Any, logits: torch.Tensor | None
) -> tuple[str, torch.Tensor | None]:
    """The class-index field: matched to the logits' shape when they are known, else an
    integer field with a usual target name."""
    fields = batch_probes.batch_fields(batch)
    if logits is not None and logits.dim() >= 2:
        found = forward_probes.class_targets(batch, logits)
        if found is not None:
            name = next(n for n, v in fields if v is found)
            return name, found
    for name, value in fields:
        if name in forward_probes.TARGET_NAMES and _is_index_tensor(value):
            return name, value
    integers = [(n, v) for n, v in fields if _is_index_tensor(v) and v.dim() == 1]
    if isinstance(batch, (tuple, list)) and len(integers) == 1 and len(fields) > 1:
        return integers[0]
    return "", None


def _is_index_tensor(value: object) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and not value.is_floating_point()
        and value.dtype != torch.bool
    )
