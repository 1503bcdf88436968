"""``data-error``: the batch is not what the model or the loss takes.

Evidence first (:func:`diagnose_evidence`, early in the registry): the batch factory
raised; a field is no tensor (a str, a list, a ragged list, None) whatever the error
said; a batch key is one edit away from a forward() parameter. Then torch's messages
(:func:`diagnose`): the wrong dtype for an embedding or a loss, token ids beyond the
vocabulary, missing keys. Says which field and what it holds.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from mlsmoke.overfit.training.evidence import BatchField, Evidence, ProjectProblem
from mlsmoke.overfit.verdict import batch_probes, forward_probes
from mlsmoke.overfit.verdict.diagnoses import _errors, _field_values, _step_evidence
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "data-error"

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
def diagnose_evidence(run: GateRun) -> Diagnosis | None:
    """What the batch held, before any error text: the factory raised, a field is no
    tensor, or a key is one edit away from a forward() parameter."""
    evidence = run.evidence
    if evidence.error is None or evidence.cuda_error is not None:
        return None
    if evidence.phase == "batch":
        return _factory_raised(evidence)
    if evidence.phase not in _RUN_PHASES:
        return None
    typos = _key_typos(run)
    if typos:
        return _misnamed_keys(run, typos)
    broken = [f for f in evidence.batch_fields if f.problem is not None]
    if broken:
        return _not_tensors(run, broken)
    if _errors.is_torch_error(evidence):
        samples = _field_values.unstacked_samples(
            next(iter(batch_probes.shared_batch(run)), None)
        )
        if samples is not None:
            return _uncollated(run, samples)
        floats = _field_values.float_class_targets(batch_probes.shared_fields(run))
        if floats:
            return _float_targets(run, floats)
    missing = missing_inputs(run)
    if missing and missing[0] in forward_probes.TARGET_NAMES:
        return _missing(run, missing)  # no targets: the root of what failed after
    none_arguments = _missing_inputs(evidence)
    if none_arguments:  # the module that raised, and the arguments it lacked
        return _missing_report(run, none_arguments)
    if missing:
        return _missing(run, missing)
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


def _missing_report(run: GateRun, missing: list[str]) -> Diagnosis:
    names = " or ".join(missing)
    diagnosis = _report(
        run,
        f"{_errors.where(run.evidence)} got no {names} (None), which it requires:"
        " the batch does not hold the field that feeds it",
        set(),
    )
    diagnosis.evidence.insert(
        1,
        f"{_errors.where(run.evidence)} was called with {', '.join(missing)} = None,"
        " and its error names them",
    )
    diagnosis.suggestions.insert(
        0,
        "check which fields the collator keeps: it may drop raw text, or a target"
        " column the model needs (labels for an encoder-decoder's decoder)",
    )
    return diagnosis


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
            return _float_targets(run, floats)
    if kind is None and isinstance(evidence.error, KeyError):
        kind = f"a missing key: {evidence.error}"
    if kind is None:
        return _rejected_fields(run)
    named = set(re.findall(r"'(\w+)'", kind))
    return _report(run, f"the batch holds {kind} ({_errors.where(evidence)})", named)


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
    diagnosis = _report(
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
    return _report(
        run,
        f"{_errors.where(evidence)} rejects the batch's {', '.join(named)}:"
        f" {_errors.first_line(evidence)}",
        set(named),
    )


def _float_targets(run: GateRun, floats: list[tuple[str, Any]]) -> Diagnosis:
    name, value = floats[0]
    diagnosis = _report(
        run,
        f"batch field {name} holds class indices as {value.dtype}"
        f" ({batch_probes.describe_value(value)}): a float target reads as"
        " probabilities or regression values (a library head then switches to a"
        " multi-label or regression loss)",
        {n for n, _ in floats},
    )
    diagnosis.suggestions.insert(0, f"make {name} int64: {name}.long()")
    return diagnosis


def _uncollated(run: GateRun, samples: int) -> Diagnosis:
    diagnosis = _report(
        run,
        f"the batch is {samples} separate samples, never collated: a list of"
        " per-sample records where the model takes one stacked tensor per field",
        set(),
    )
    diagnosis.suggestions.insert(
        0,
        "let the DataLoader's default collate stack the samples (drop a collate_fn"
        " that returns its input), or stack them in the collate_fn (torch.stack,"
        " a library collator)",
    )
    return diagnosis


_RUN_PHASES = ("forward", "loss", "backward", "step")

FACTORY_SUGGESTIONS = [
    "tokenize (or otherwise tensorize) the examples before they reach the collator:"
    " a collator takes numbers, not raw text",
    "pad ragged examples to one length (a padding collator, or pad_sequence) before"
    " stacking them",
]


def _factory_raised(evidence: Evidence) -> Diagnosis:
    if isinstance(evidence.error, ProjectProblem):  # it returned no tensors at all
        return Diagnosis(
            CODE,
            f"building the batch: {evidence.error}",
            [f"batch field {f.name}: {f.holds}" for f in evidence.batch_fields],
            SUGGESTIONS[:2],
        )
    lines = [f"the batch factory raised {_errors.raised(evidence)}"]
    if evidence.user_traceback:
        lines.append(evidence.user_traceback)
    return Diagnosis(
        CODE,
        f"building the batch raised {type(evidence.error).__name__}: the data pipeline"
        " (dataset, collator) cannot make this batch",
        lines,
        FACTORY_SUGGESTIONS + SUGGESTIONS[:1],
    )


def _not_tensors(run: GateRun, broken: list[BatchField]) -> Diagnosis:
    first = broken[0]
    more = f" (and {len(broken) - 1} more fields)" if len(broken) > 1 else ""
    return _report(
        run,
        f"batch field {first.name} holds {first.problem}{more}: the data pipeline"
        " never made it a tensor",
        {f.name for f in broken},
    )


def _misnamed_keys(run: GateRun, typos: list[tuple[str, str]]) -> Diagnosis:
    key, parameter = typos[0]
    lines = [
        f"batch key {k!r} is not a parameter of forward(); forward() takes {p!r}"
        for k, p in typos
    ]
    diagnosis = _report(
        run,
        f"batch key {key!r} does not match forward()'s parameter {parameter!r}:"
        f" the model never receives {parameter}",
        {k for k, _ in typos},
    )
    diagnosis.evidence[1:1] = lines
    diagnosis.suggestions.insert(0, f"rename the batch key {key!r} to {parameter!r}")
    return diagnosis


def _missing(run: GateRun, missing: list[str]) -> Diagnosis:
    names = " or ".join(repr(name) for name in missing)
    diagnosis = _report(
        run,
        f"the batch holds no {names}, which forward() takes: the data pipeline"
        " dropped it, or never made it",
        set(),
    )
    keys = ", ".join(f.name for f in run.evidence.batch_fields)
    diagnosis.evidence.insert(1, f"the batch's keys: {keys}")
    diagnosis.suggestions.insert(0, f"put {names} in the batch")
    return diagnosis


def missing_inputs(run: GateRun) -> list[str]:
    """forward() parameters the batch passed by keyword does not fill, that the
    evidence points at: a target parameter when the run failed without a loss or
    raised, else the parameters the error names. A size check is left to shape-error.
    """
    evidence = run.evidence
    if run.loss_fn is not None or evidence.forward_parameters is None:
        return []
    if _step_evidence.is_shape_check(run) or _errors.mentions(
        evidence, _errors.SHAPE_MESSAGES
    ):
        return []
    keys = {f.name for f in evidence.batch_fields}
    unfilled = [p for p in evidence.forward_parameters if p not in keys]
    if not keys or not unfilled or not _by_keyword(evidence):
        return []
    targets = [p for p in unfilled if p in forward_probes.TARGET_NAMES]
    if targets:
        return targets[:1]
    text = _errors.message(evidence)
    return [p for p in unfilled if re.search(rf"\b{re.escape(p)}\b", text)]


def _by_keyword(evidence: Evidence) -> bool:
    """The batch was a mapping (its fields are keys, not positions)."""
    return evidence.batch_by_keyword


def _report(run: GateRun, summary: str, named: set[str]) -> Diagnosis:
    """The diagnosis with the error raised and every field, the suspects marked."""
    evidence = run.evidence
    lines = [f"{_errors.where(evidence)} raised {_errors.raised(evidence)}"]
    if evidence.config_key == "loss":
        lines = ["the model returned no loss"]
    fields = batch_probes.shared_fields(run)
    suspects = {name for name, _ in fields if name in named} or suspect_fields(fields)
    lines += [
        f"batch field {name}: {batch_probes.describe_value(value)}"
        + ("  <- here" if name in suspects and len(suspects) < len(fields) else "")
        for name, value in fields
    ]
    suggestions = list(SUGGESTIONS)
    if run.loss_fn is None:
        suggestions.insert(0, CALLED_AS)
    return Diagnosis(CODE, summary, lines, suggestions)


def _key_typos(run: GateRun) -> list[tuple[str, str]]:
    """(batch key, forward parameter) pairs one or two edits apart, when the batch is
    passed to the model by keyword (no loss callable)."""
    evidence = run.evidence
    if run.loss_fn is None and evidence.forward_parameters is not None:
        keys = [f.name for f in evidence.batch_fields]
        return close_names(keys, evidence.forward_parameters)
    return []


def close_names(keys: list[str], parameters: list[str]) -> list[tuple[str, str]]:
    """Each key that is no parameter but one or two edits from a parameter no key
    fills: ``label`` for ``labels``, ``input_id`` for ``input_ids``."""
    unfilled = [p for p in parameters if p not in keys]
    pairs = []
    for key in keys:
        if key in parameters:
            continue
        near = [
            (distance, p)
            for p in unfilled
            if (distance := edit_distance(key.lower(), p.lower())) <= MAX_EDITS
            and 2 * distance < min(len(key), len(p))
        ]
        if near:
            pairs.append((key, min(near)[1]))
    return pairs


MAX_EDITS = 2


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: insertions, deletions and substitutions."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            )
        previous = current
    return previous[-1]


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
