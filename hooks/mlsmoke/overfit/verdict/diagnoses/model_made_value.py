"""A value that is no tensor reached a layer while every field of the batch is a
tensor: the model's own code made it, so it is ``train-error`` in the model's
forward, not ``data-error``. Names the first module given such a value, the value,
and the mapping it came from when it is one of its keys (``_, pooled = encoder(x)``
on a dict or a ModelOutput unpacks its keys)."""

from __future__ import annotations

import re

from mlsmoke.overfit.verdict import value_origin
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import TRAIN_ERROR, Diagnosis

# torch's and Python's words for "a value of this type where a tensor is needed"
_NOT_A_TENSOR = (
    r"must be Tensor, not (\w+)",
    r"expected Tensor as element \d+ in argument \d+, but got (\w+)",
    r"'(\w+)' object has no attribute '(?:dim|size|shape|view|to|float|long"
    r"|reshape|unsqueeze|device|dtype)'",
)
# None is most often a batch field that never arrived: data-error's to say.
_NOT_MADE_BY_THE_MODEL = {"NoneType", "Tensor", "Parameter"}

SUGGESTIONS = [
    "index a module's dict or ModelOutput by name (out['pooler_output'],"
    " out.last_hidden_state): unpacking or iterating a mapping yields its keys",
    "print type() of each value passed between modules in forward, from the batch to"
    " the module named here",
]


@diagnoser(TRAIN_ERROR)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not _errors.raised_in_forward(evidence) or evidence.cuda_error is not None:
        return None
    kind = non_tensor_kind(_errors.message(evidence))
    fields = evidence.batch_fields
    if kind is None or not fields or any(f.problem is not None for f in fields):
        return None
    if value_origin.batch_holds(run, kind):
        return None  # the batch, as the model receives it, holds one
    origin = value_origin.first_non_tensor(run, kind)
    place = _errors.where(evidence)
    if origin is not None:
        place = f"module {_errors.module_name(origin.module)}"
    lines = [f"{_errors.where(evidence)} raised {_errors.raised(evidence)}"]
    if origin is not None:
        lines.append(f"module {_errors.module_name(origin.module)} was called with"
                     f" {origin.value} ({origin.argument})")  # fmt: skip
        if origin.key_of is not None:
            lines.append(
                f"{origin.value} is a key of the mapping module"
                f" {_errors.module_name(origin.key_of)} returned: unpacking or"
                " iterating a dict (or a ModelOutput) gives its keys, not its values"
            )
    lines += [f"batch field {f.name}: {f.holds}" for f in fields]
    lines.append("every batch field is a tensor, so the model's own code made the"
                 f" {kind}")  # fmt: skip
    return Diagnosis(
        TRAIN_ERROR,
        f"a {kind} reached {place}, made by the model's code: the batch holds only"
        " tensors",
        lines,
        SUGGESTIONS,
    )


def non_tensor_kind(message: str) -> str | None:
    """The type of the value an error says stood where a tensor was needed."""
    for pattern in _NOT_A_TENSOR:
        found = re.search(pattern, message)
        if found and found.group(1) not in _NOT_MADE_BY_THE_MODEL:
            return found.group(1)
    return None
