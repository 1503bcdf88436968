"""``data-error``: the batch is not what the model or the loss takes.

Strings or lists instead of tensors, the wrong dtype for an embedding or a loss, missing
or misnamed keys, token ids beyond the vocabulary. Says which field and what it holds.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from mlsmoke.overfit.verdict import batch_probes
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "data-error"

_KINDS = (
    (r"must be Tensor, not (\w+)", "a {0} where a tensor is needed"),
    (r"unexpected keyword argument '(\w+)'", "a key the model does not take: {0!r}"),
    (r"missing \d+ required positional argument[s]?: (.+)", "a missing key: {0}"),
    (
        r"forward\(\) takes \d+ positional arguments? but \d+ were given",
        "more fields than forward() takes",
    ),
    (r"'indices' to have one of the following scalar types", "float token ids"),
    (r"index out of range in self", "ids beyond an embedding's size"),
    (r"expected target dtype to be (\w+)", "targets of the wrong dtype"),
    (r"expected scalar type (\w+) but found (\w+)", "{1} data where {0} is needed"),
    (r"must have the same dtype", "inputs of the wrong dtype"),
    (r"found dtype (\w+) but expected (\w+)", "{0} data where {1} is needed"),
    (r"not implemented for '(\w+)'", "data of dtype {0} the operation cannot take"),
)

SUGGESTIONS = [
    "check the dataset's inputs first: numbers in tensors, not raw text or lists",
    "make the batch collate: tensorize and pad fields (a collator or torch.stack)",
    "class indices and token ids are int64 (torch.long); inputs are float",
    "name batch keys exactly as the model's forward() arguments",
]

# Without a loss key the model is called with the batch itself (objective.call_model).
CALLED_AS = (
    "without a loss key the gate calls model(*batch) for a tuple or list and"
    " model(**batch) for a mapping; to call it otherwise, set loss to a callable"
    " (model, batch) -> scalar tensor"
)


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not _errors.raised_in_forward(evidence):
        return None
    kind = _data_problem(str(evidence.error))
    if kind is None and not isinstance(evidence.error, KeyError):
        return None
    kind = kind or f"a missing key: {evidence.error}"
    lines = [f"{_errors.where(evidence)} raised {_errors.raised(evidence)}"]
    fields = _fields(run)
    named = set(re.findall(r"'(\w+)'", kind))
    suspects = {name for name, _ in fields if name in named} or suspect_fields(fields)
    lines += [
        f"batch field {name}: {batch_probes.describe_value(value)}"
        + ("  <- here" if name in suspects and len(suspects) < len(fields) else "")
        for name, value in fields
    ]
    suggestions = SUGGESTIONS
    if run.loss_fn is None:
        suggestions = [CALLED_AS] + SUGGESTIONS
    return Diagnosis(
        CODE,
        f"the batch holds {kind} ({_errors.where(evidence)})",
        lines,
        suggestions,
    )


def suspect_fields(fields: list[tuple[str, Any]]) -> set[str]:
    """Fields that are not tensors, or float tensors holding whole numbers (ids or
    class indices stored as floats)."""
    return {name for name, value in fields if _suspect(value)}


def _suspect(value: Any) -> bool:
    if not isinstance(value, torch.Tensor):
        return True
    if not value.is_floating_point() or value.numel() == 0:
        return False
    return bool(torch.equal(value, value.round())) and bool(value.abs().max() > 1)


def _data_problem(text: str) -> str | None:
    for pattern, template in _KINDS:
        found = re.search(pattern, text, flags=re.IGNORECASE)
        if found:
            return template.format(*found.groups())
    return None


def _fields(run: GateRun) -> list[tuple[str, Any]]:
    try:
        return batch_probes.batch_fields(batch_probes.fresh_batch(run))
    except Exception:
        return []
