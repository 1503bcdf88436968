"""``shape-error``: tensors do not match. Names the module (or the loss) where it
happened, the line of the project's code where the tensors met (the innermost frame
outside installed packages, the standard library and mlsmoke), and the shapes of the
module's inputs, as the forward hooks recorded them.

The rule is the evidence, not one library's sentence: a ValueError, assert,
RuntimeError or IndexError raised in the forward pass or the loss whose text speaks of
sizes, shapes, dimensions, channels or lengths (torch's, a library's, or the project's
own assert, whose line is read when it has no message)."""

from __future__ import annotations


from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import batch_probes, forward_probes, project_frames
from mlsmoke.overfit.verdict.diagnoses import _errors, _field_values, _step_evidence
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "shape-error"

SUGGESTIONS = [
    "annotate shapes where tensors change shape (# (B, T, C)) and step through the"
    " forward pass with a debugger",
    "check in_features/in_channels against the layer before, and flatten sizes against"
    " the input resolution",
    "check the target's shape against the loss: cross-entropy takes (B, C) logits and"
    " (B,) class indices",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if _errors.problem_code(evidence) == "loss-not-scalar":
        return Diagnosis(
            CODE,
            "the loss is not a scalar: one value per sample (or per element) was"
            " never reduced",
            [str(evidence.error)],
            ["reduce the loss to one number: .mean() (or reduction='mean')"]
            + SUGGESTIONS[2:],
        )
    if evidence.error is None and not evidence.memorized:
        return _shape_warning(run)
    if not _errors.raised_in_forward(evidence):
        return None
    longer = _longer_than_a_table(run)
    if longer is not None:
        return longer
    # torch's own messages are extra evidence; the rule is a size check that failed
    if not (
        _step_evidence.is_shape_check(run)
        or _errors.mentions(evidence, _errors.SHAPE_MESSAGES)
    ):
        return None
    place = _errors.where(evidence)
    lines = [f"{place} raised {_errors.raised(evidence)}"]
    line = project_frames.raised_at(evidence.error, evidence.working_directory)
    if line is not None:
        lines.insert(0, f"where they met, in the project's code: {line}")
    shapes = _errors.input_shapes(evidence, evidence.failed_module)
    if shapes is not None and place != "the loss":
        lines.append(f"inputs of {place}: {shapes}")
    if place == "the loss":
        lines += _loss_inputs(run)
    else:
        lines += _trail(evidence)
    at = f", at {line}" if line is not None else ""
    return Diagnosis(CODE, f"shapes do not match in {place}{at}", lines, SUGGESTIONS)


def _longer_than_a_table(run: GateRun) -> Diagnosis | None:
    """An index past a table's rows where the batch's sequences are longer than the
    table: the positions run out (sequences longer than max_position_embeddings),
    whatever values the fields hold."""
    evidence = run.evidence
    found = _errors.index_beyond(evidence)
    if found is None:
        return None
    index, size = found
    fields = batch_probes.shared_fields(run)
    long = _field_values.sequences_longer_than(fields, size, index)
    if not long:
        return None
    name, length = long[0]
    place = _errors.where(evidence)
    return Diagnosis(
        CODE,
        f"sequences of {length} positions are longer than a table of {size} in"
        f" {place}: the model was built for at most {size} positions",
        [f"{place} raised {_errors.raised(evidence)}"]
        + [f"batch field {n}: {length} positions" for n, length in long],
        [
            f"truncate the sequences to {size} (truncation=True, max_length={size}"
            " in the tokenizer), or build the model with more positions"
            " (max_position_embeddings)",
        ]
        + SUGGESTIONS[:1],
    )


def _shape_warning(run: GateRun) -> Diagnosis | None:
    """The run trained but did not memorize, and the first forward or loss warned of
    two shapes that differ (a loss broadcasting a (B,) target against (B, 1)
    outputs): the shapes, not the optimizer, decide what it learns."""
    evidence = run.evidence
    warned = [w for w in evidence.forward_warnings if _errors.names_differing_shapes(w)]
    if not warned:
        return None
    return Diagnosis(
        CODE,
        "shapes do not match: the first forward pass warned of mismatched sizes,"
        " and the run did not memorize",
        [f"warned: {text}" for text in warned]
        + [
            f"the loss went from {evidence.losses[0]:.4g} to"
            f" {evidence.losses[-1]:.4g} in {evidence.steps} steps, target"
            f" {evidence.target:.4g}"
        ]
        + _loss_inputs(run),
        [
            "make the output and the target the same shape before the loss"
            " (squeeze(-1) a (B, 1) output, or unsqueeze the (B,) target):"
            " broadcasting compares every output with every target",
        ]
        + SUGGESTIONS[:1],
    )


def _trail(evidence: Evidence) -> list[str]:
    """The last modules that ran before the failure, with their input shapes."""
    ran = [name for name in evidence.module_order if name != evidence.failed_module]
    recent = list(dict.fromkeys(reversed(ran)))[:3]
    return [
        f"ran before it: {_errors.module_name(name)} with inputs"
        f" {_errors.input_shapes(evidence, name)}"
        for name in reversed(recent)
    ]


def _loss_inputs(run: GateRun) -> list[str]:
    capture = forward_probes.capture_forward(run)
    lines = []
    if capture is not None:
        logits = forward_probes.logits_of(capture.output)
        if logits is not None:
            lines.append(f"model output: {batch_probes.describe_value(logits)}")
    return lines + [
        f"batch field {name}: {batch_probes.describe_value(value)}"
        for name, value in batch_probes.shared_fields(run)
    ]
