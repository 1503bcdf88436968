"""The words of a ``data-error``: the error raised and every batch field, the suspect
fields marked, and one report per finding (the factory raised, a field is no tensor,
a key is misnamed or missing, samples never collated, class targets stored as floats).
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training.evidence import BatchField, Evidence, ProjectProblem
from mlsmoke.overfit.verdict import batch_probes
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "data-error"

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


def report(run: GateRun, summary: str, named: set[str]) -> Diagnosis:
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


FACTORY_SUGGESTIONS = [
    "tokenize (or otherwise tensorize) the examples before they reach the collator:"
    " a collator takes numbers, not raw text",
    "pad ragged examples to one length (a padding collator, or pad_sequence) before"
    " stacking them",
]


def factory_raised(evidence: Evidence) -> Diagnosis:
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


def not_tensors(run: GateRun, broken: list[BatchField]) -> Diagnosis:
    first = broken[0]
    more = f" (and {len(broken) - 1} more fields)" if len(broken) > 1 else ""
    return report(
        run,
        f"batch field {first.name} holds {first.problem}{more}: the data pipeline"
        " never made it a tensor",
        {f.name for f in broken},
    )


def misnamed_keys(run: GateRun, typos: list[tuple[str, str]]) -> Diagnosis:
    key, parameter = typos[0]
    lines = [
        f"batch key {k!r} is not a parameter of forward(); forward() takes {p!r}"
        for k, p in typos
    ]
    diagnosis = report(
        run,
        f"batch key {key!r} does not match forward()'s parameter {parameter!r}:"
        f" the model never receives {parameter}",
        {k for k, _ in typos},
    )
    diagnosis.evidence[1:1] = lines
    diagnosis.suggestions.insert(0, f"rename the batch key {key!r} to {parameter!r}")
    return diagnosis


def missing_keys(run: GateRun, missing: list[str]) -> Diagnosis:
    names = " or ".join(repr(name) for name in missing)
    diagnosis = report(
        run,
        f"the batch holds no {names}, which forward() takes: the data pipeline"
        " dropped it, or never made it",
        set(),
    )
    keys = ", ".join(f.name for f in run.evidence.batch_fields)
    diagnosis.evidence.insert(1, f"the batch's keys: {keys}")
    diagnosis.suggestions.insert(0, f"put {names} in the batch")
    return diagnosis


def float_targets(run: GateRun, floats: list[tuple[str, Any]]) -> Diagnosis:
    name, value = floats[0]
    diagnosis = report(
        run,
        f"batch field {name} holds class indices as {value.dtype}"
        f" ({batch_probes.describe_value(value)}): a float target reads as"
        " probabilities or regression values (a library head then switches to a"
        " multi-label or regression loss)",
        {n for n, _ in floats},
    )
    diagnosis.suggestions.insert(0, f"make {name} int64: {name}.long()")
    return diagnosis


def uncollated(run: GateRun, samples: int) -> Diagnosis:
    diagnosis = report(
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


def missing_arguments(run: GateRun, missing: list[str]) -> Diagnosis:
    names = " or ".join(missing)
    diagnosis = report(
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
