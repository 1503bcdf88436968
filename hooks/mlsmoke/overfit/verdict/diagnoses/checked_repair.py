"""A repair of the batch that made the failing step run, tried on a copy
(:mod:`mlsmoke.overfit.verdict.repairs`): its kind names the code, and it is the first
thing to try, marked as checked.

The code follows the repair: a cast is ``data-error``; a shift into range or an ignore
value mapped is ``label-range-error``; a reshape, permute or squeeze, or a target
changed to the form the loss builds (argmax, one-hot), is ``shape-error``. A repair
that runs but may change what the data means is reported as a hypothesis with its
evidence, never as the fix. When no repair ran, the diagnosis that answers after this
one says what was tried (:func:`annotate`).
"""

from __future__ import annotations

from mlsmoke.overfit.verdict import batch_probes, repairs
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.repairs.repair import LABEL_RANGE_ERROR, Repair, spelled
from mlsmoke.overfit.verdict.repairs.trial import Trials, trials
from mlsmoke.overfit.verdict.result import Diagnosis

CHECKED = "(checked: the step runs)"
MAX_ADVICE_AFTER_TRIES = 2
# The codes whose report is about the batch: a failed repair speaks to them.
BATCH_CODES = ("data-error", "label-range-error", "shape-error", "train-error")

_SUMMARIES = {
    "data-error": "the batch holds {field} in a dtype the step cannot take",
    "label-range-error": "{field} holds values outside the range the model's output"
    " implies",
    "shape-error": "{field} is not in the form or layout the step takes",
}


@diagnoser("data-error")  # also label-range-error and shape-error: see _SUMMARIES
def diagnose(run: GateRun) -> Diagnosis | None:
    found = trials(run, repairs.KINDS)
    if found is None:
        return None
    if found.worked is not None:
        return _fixed(run, found.worked, found)
    if found.hypotheses:
        return _hypothesis(run, found.hypotheses[0], found)
    return None


def _fixed(run: GateRun, repair: Repair, found: Trials) -> Diagnosis:
    summary = _SUMMARIES[repair.code].format(field=" and ".join(repair.fields))
    if repair.together:
        summary = (
            f"{' and '.join(map(spelled, repair.fields))} hold the same layout, which"
            " the step does"
            " not take: changing one alone does not make it run"
        )
    if repair.topic == "contiguity":
        summary = (
            f"{repair.field} is a strided view (a slice of another tensor): its"
            " shape agrees, but .view() cannot take its layout"
        )
    held = _field_dtype(run, repair.field)
    if repair.becomes and held:
        summary = (
            f"the batch holds {repair.field} as {held} where the step takes"
            f" {repair.becomes}"
        )
    return Diagnosis(
        repair.code,
        summary,
        _evidence(run, repair, found),
        [f"{repair.written}  {CHECKED}"],
    )


def _hypothesis(run: GateRun, repair: Repair, found: Trials) -> Diagnosis:
    summary = (
        f"{repair.field} holds values outside the range the model's output implies;"
        " a shift makes the step run, but is not proven right"
    )
    lines = _evidence(run, repair, found) + [repair.meaning]
    suggestions = [
        f"check what {repair.field}'s values mean before shifting them: if they are"
        f" offset, {repair.written} runs; if there are more classes than outputs,"
        " build the model with as many outputs as classes",
    ]
    return Diagnosis(LABEL_RANGE_ERROR, summary, lines, suggestions)


def _evidence(run: GateRun, repair: Repair, found: Trials) -> list[str]:
    evidence, lines = run.evidence, []
    if evidence.rerun_of is not None:
        lines.append(
            f"on {evidence.rerun_of.device}: a device-side assert; the CPU re-run"
            " raised the error below"
        )
    elif evidence.cuda_error is not None:
        lines.append(
            f"on {evidence.device}: {_errors.first_line(evidence)}; the repairs ran"
            " on the CPU, where errors raise at their real line"
        )
    if evidence.error is None:
        lines.append("the first loss is not finite")
    elif evidence.cuda_error is None:
        lines.append(f"{_errors.where(evidence)} raised {_errors.raised(evidence)}")
    lines.append(
        f"on a copy of the batch, {repair.written} makes forward and loss run"
        " (no step taken; the project's batch is unchanged)"
    )
    if found.failed:
        lines.append(f"tried first, still failing: {_written(found.failed)}")
    for name, value in batch_probes.shared_fields(run):
        if name in repair.fields:
            lines.append(
                f"batch field {name}: {batch_probes.describe_value(value)}  <- here"
            )
    return lines


def _field_dtype(run: GateRun, name: str) -> str | None:
    for field, value in batch_probes.shared_fields(run):
        if field == name and hasattr(value, "dtype"):
            return str(value.dtype).replace("torch.", "")
    return None


def annotate(run: GateRun, diagnosis: Diagnosis) -> Diagnosis:
    """A diagnosis of the batch after every tried repair failed: one line says what
    was tried, no suggestion repeats a tried repair, and at most two remain."""
    found = run.memo.get("repairs")
    if not isinstance(found, Trials) or not found.failed or found.worked is not None:
        return diagnosis
    if diagnosis.code not in BATCH_CODES:
        return diagnosis
    diagnosis.evidence.append(
        "tried on a copy of the batch, none made the step run:"
        f" {_written(found.failed)}"
    )
    refuted = {words for repair in found.failed for words in repair.advice}
    kept = [s for s in diagnosis.suggestions if not any(w in s for w in refuted)]
    diagnosis.suggestions = kept[:MAX_ADVICE_AFTER_TRIES]
    return diagnosis


def _written(tried: list[Repair]) -> str:
    return ", ".join(repair.written for repair in tried)
