"""``data-error``: the batch is not what the model or the loss takes.

Evidence first (:func:`diagnose_evidence`, early in the registry): the batch factory
raised; a field is no tensor (a str, a list, a ragged list, None) whatever the error
said; a batch key is one edit away from a forward() parameter. Then torch's messages
(:func:`diagnose`): the wrong dtype for an embedding or a loss, token ids beyond the
vocabulary, missing keys. Says which field and what it holds.

The rules are here; the batch's keys against forward()'s parameters are read in
``_batch_keys.py``, and the report's words are built in ``_data_report.py``.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import batch_probes, forward_probes
from mlsmoke.overfit.verdict.diagnoses import (
    _batch_keys,
    _data_report,
    _errors,
    _field_values,
    _step_evidence,
)
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = _data_report.CODE

TARGET_DTYPE = "targets of the wrong dtype"
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
    (r"expected target dtype to be (\w+)", TARGET_DTYPE),
    (r"expected scalar type (\w+) but found (\w+)", "{1} data where {0} is needed"),
    (r"must have the same dtype", "inputs of the wrong dtype"),
    (r"found dtype (\w+) but expected (\w+)", "{0} data where {1} is needed"),
    (r"not implemented for '(\w+)'", "data of dtype {0} the operation cannot take"),
    (
        r"input type \((unsigned char|char|short|int|long|bool|\S*(?:Byte|Char|Short"
        r"|Int|Long|Bool)Tensor)\) and (?:bias|weight) type \((\S+)\)",
        "{0} data where {1} is needed",
    ),
)
# Two dtypes torch could not mix, in its words, and the dtypes its names stand for.
DTYPE_PAIR = r"expected scalar type (\w+) but found (\w+)"
_TORCH_DTYPES = {
    "Byte": "torch.uint8", "Char": "torch.int8", "Short": "torch.int16",
    "Int": "torch.int32", "Long": "torch.int64", "Half": "torch.float16",
    "BFloat16": "torch.bfloat16", "Float": "torch.float32", "Double": "torch.float64",
    "Bool": "torch.bool",
}  # fmt: skip
_RUN_PHASES = ("forward", "loss", "backward", "step")


@diagnoser(CODE)
def diagnose_evidence(run: GateRun) -> Diagnosis | None:
    """What the batch held, before any error text: the factory raised, a field is no
    tensor, or a key is one edit away from a forward() parameter."""
    evidence = run.evidence
    if evidence.error is None or evidence.cuda_error is not None:
        return None
    if evidence.phase == "batch":
        return _data_report.factory_raised(evidence)
    if evidence.phase not in _RUN_PHASES:
        return None
    typos = _batch_keys.key_typos(run)
    if typos:
        return _data_report.misnamed_keys(run, typos)
    broken = [f for f in evidence.batch_fields if f.problem is not None]
    if broken:
        return _data_report.not_tensors(run, broken)
    if _errors.is_torch_error(evidence):
        samples = _field_values.unstacked_samples(
            next(iter(batch_probes.shared_batch(run)), None)
        )
        if samples is not None:
            return _data_report.uncollated(run, samples)
        floats = _field_values.float_class_targets(batch_probes.shared_fields(run))
        if floats:
            return _data_report.float_targets(run, floats)
    missing = _batch_keys.missing_inputs(run)
    if missing and missing[0] in forward_probes.TARGET_NAMES:
        # no targets: the root of what failed after
        return _data_report.missing_keys(run, missing)
    none_arguments = _missing_inputs(evidence)
    if none_arguments:  # the module that raised, and the arguments it lacked
        return _data_report.missing_arguments(run, none_arguments)
    if missing:
        return _data_report.missing_keys(run, missing)
    return None


def _missing_inputs(evidence: Evidence) -> list[str]:
    """The arguments the failing module got as None that its error names: an input
    it checks for never arrived (the batch lacks the field that feeds it), whatever
    words the check used."""
    if not _errors.raised_in_forward(evidence):
        return []
    nones = evidence.module_none_arguments.get(evidence.failed_module or "", [])
    words = set(re.findall(r"\w+", str(evidence.error)))
    return [name for name in nones if name in words]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    """What torch's message says about the data (dtypes, keys, ids out of range)."""
    evidence = run.evidence
    if not _errors.raised_in_forward(evidence):
        return None
    beyond = _ids_beyond_a_table(run)
    if beyond is not None:
        return beyond
    kind = _mismatched_dtypes(run) or _data_problem(str(evidence.error))
    if kind == TARGET_DTYPE:  # the field, whatever its name (a TensorDict's "action")
        floats = _field_values.whole_float_fields(batch_probes.shared_fields(run))
        if len(floats) == 1:
            return _data_report.float_targets(run, floats)
    if kind is None and isinstance(evidence.error, KeyError):
        kind = f"a missing key: {evidence.error}"
    if kind is None:
        return _rejected_fields(run)
    named = set(re.findall(r"'(\w+)'", kind))
    return _data_report.report(
        run, f"the batch holds {kind} ({_errors.where(evidence)})", named
    )


def _mismatched_dtypes(run: GateRun) -> str | None:
    """Two dtypes an operation could not mix, told apart by the batch: the one a
    batch field holds is the data's (torch names them in either order)."""
    found = re.search(DTYPE_PAIR, _errors.message(run.evidence))
    if found is None:
        return None
    fields = batch_probes.shared_fields(run)
    held = {str(value.dtype) for _, value in fields if _is_tensor(value)}
    first, second = found.groups()
    if _TORCH_DTYPES.get(first) in held and _TORCH_DTYPES.get(second) not in held:
        return f"{first} data where {second} is needed"
    if _TORCH_DTYPES.get(second) in held and _TORCH_DTYPES.get(first) not in held:
        return f"{second} data where {first} is needed"
    return None


def _is_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor)


def _ids_beyond_a_table(run: GateRun) -> Diagnosis | None:
    """An index past a lookup table's rows, and the batch fields that hold such ids
    (token ids, position ids): the ids, not the model, are out of range."""
    found = _errors.index_beyond(run.evidence)
    if found is None:
        return None
    index, size = found
    fields = batch_probes.shared_fields(run)
    if _field_values.sequences_longer_than(fields, size, index):
        return None  # the positions ran out: shape-error's to say
    beyond = _field_values.fields_beyond(fields, size, index)
    inputs = [(n, v) for n, v in beyond if not _field_values.is_target_name(n)]
    if not inputs:
        return None
    name, largest = inputs[0]
    diagnosis = _data_report.report(
        run,
        f"batch field {name} holds ids up to {largest}, beyond a lookup table of"
        f" {size} rows ({_errors.where(run.evidence)})",
        {n for n, _ in inputs},
    )
    diagnosis.suggestions.insert(
        0,
        f"keep {name} below the table's size ({size}): the vocabulary, the number of"
        " positions or types the model was built with, or build it larger",
    )
    return diagnosis


def _rejected_fields(run: GateRun) -> Diagnosis | None:
    """The model's own input check names batch fields it was given, and speaks of
    no sizes: it rejects what the batch holds (two inputs where it takes one of
    them, a field of the wrong kind), whatever its words."""
    evidence = run.evidence
    if not isinstance(evidence.error, (ValueError, TypeError)):
        return None
    if _step_evidence.is_shape_check(run) or _errors.speaks_of_shapes(
        _errors.message(evidence)
    ):
        return None
    keys = [f.name for f in evidence.batch_fields]
    named = _field_values.fields_named_in(_errors.message(evidence), keys)
    if not named:
        return None
    return _data_report.report(
        run,
        f"{_errors.where(evidence)} rejects the batch's {', '.join(named)}:"
        f" {_errors.first_line(evidence)}",
        set(named),
    )


def _data_problem(text: str) -> str | None:
    for pattern, template in _KINDS:
        found = re.search(pattern, text, flags=re.IGNORECASE)
        if found:
            return template.format(*found.groups())
    return None
