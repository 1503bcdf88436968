"""``non-finite``: NaN or Inf in the loss, at init or during training.

Names the first module whose output, and the first parameter whose gradient, went
non-finite, and re-runs in float64 to tell a precision problem from a logic one.
"""

from __future__ import annotations

import math

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import batch_probes, curve_measures, forward_probes, probes
from mlsmoke.overfit.verdict.diagnoses import _field_values
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "non-finite"

PRECISION_SUGGESTIONS = [
    "the problem disappears in float64: it is precision; keep values in range with"
    " log-space or fused ops (log_softmax, logsumexp, cross_entropy on logits)",
    "check normalization layers and any exp() or division by a small number",
    "train in float32, or bfloat16 rather than float16",
]
LOGIC_SUGGESTIONS = [
    "the problem stays in float64: it is a logic error, such as log(0), 0/0, sqrt of"
    " a negative number, or NaN/Inf in the data",
    "use log_softmax/cross_entropy on logits instead of log(softmax) or log(probs)",
    "add an epsilon where a log or a division can see 0",
]
TRAINING_SUGGESTIONS = [
    "lower the learning rate or clip gradients (torch.nn.utils.clip_grad_norm_)",
]


BATCH_SUGGESTIONS = [
    "find where the NaN or Inf enter the data: missing values read as NaN, a division"
    " by a zero std in normalization, a log of 0 in preprocessing",
    "fill or drop missing values before they reach the batch (torch.nan_to_num, or"
    " filter the examples), and assert torch.isfinite(x).all() in the data pipeline",
]


@diagnoser(CODE)
def diagnose_batch(run: GateRun) -> Diagnosis | None:
    """A float field of the batch holds NaN or Inf and the run did not memorize:
    every loss it touches is poisoned, whatever the curve looked like (an error the
    run raised is the error diagnoses' to name)."""
    evidence = run.evidence
    poisoned = [f for f in evidence.batch_fields if f.nonfinite]
    if evidence.memorized or not poisoned or evidence.error is not None:
        return None
    first = poisoned[0]
    lines = [
        f"batch field {f.name}: {f.holds}, with {f.nonfinite} NaN or Inf values"
        for f in poisoned
    ]
    if evidence.losses:
        lines.append(f"the loss at init: {evidence.losses[0]:.4g}")
    return Diagnosis(
        CODE,
        f"batch field {first.name} holds {first.nonfinite} NaN or Inf values",
        lines,
        BATCH_SUGGESTIONS,
    )


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if evidence.error is not None:
        return None
    step = curve_measures.first_nonfinite(evidence.losses)
    if step is None:
        return None
    when = "at init" if step == 0 else f"at step {step}"
    ignored = (
        _field_values.ignored_targets(batch_probes.shared_fields(run))
        if step == 0
        else []
    )
    if ignored:
        return _nothing_to_predict(evidence, ignored)
    lines = [f"loss {evidence.losses[step]} {when}"]
    origin = forward_probes.nonfinite_origin(run) if step == 0 else None
    if origin is not None:
        lines.append(f"it first appears in {origin}, from finite inputs")
    elif evidence.first_nonfinite_output is not None:
        module = _module(evidence.first_nonfinite_output)
        lines.append(f"first module with a non-finite output: {module}")
    if evidence.first_nonfinite_grad is not None:
        parameter = evidence.first_nonfinite_grad
        lines.append(f"first parameter with a non-finite gradient: {parameter}")
    if step > 0 and evidence.grad_norms:
        lines.append(_grad_trend(evidence))
    precision, float64_line = _precision_verdict(run, step)
    lines.append(float64_line)
    kind = "a precision problem" if precision else "a logic error, not precision"
    suggestions = PRECISION_SUGGESTIONS if precision else LOGIC_SUGGESTIONS
    if precision is None:
        kind = "precision or logic, which float64 could not tell"
        suggestions = LOGIC_SUGGESTIONS + PRECISION_SUGGESTIONS
    if step > 0:
        suggestions = suggestions + TRAINING_SUGGESTIONS
    return Diagnosis(
        CODE, f"the loss is {evidence.losses[step]} {when}: {kind}", lines, suggestions
    )


def _nothing_to_predict(
    evidence: Evidence, ignored: list[tuple[str, int]]
) -> Diagnosis:
    name, value = ignored[0]
    return Diagnosis(
        CODE,
        f"the loss is {evidence.losses[0]} at init: every target in batch field"
        f" {name} is {value}, the index a loss ignores, so it averages over zero"
        " targets (0/0)",
        [f"batch field {n}: every value is {v}" for n, v in ignored],
        [
            f"check the step that masks {name}: padding, truncation or a prompt mask"
            " that covers every token (labels = -100 everywhere)",
            "keep at least one real target per batch: longer sequences, or a"
            " max_length that leaves room for the answer",
        ],
    )


def _precision_verdict(run: GateRun, step: int) -> tuple[bool | None, str]:
    """Whether float64 gets past where float32 broke, and the line that says so;
    None when the float64 run kept float32 data in the batch (it cannot tell)."""
    wide = probes.in_float64(run)
    if wide.batch_not_cast:
        return None, f"the float64 re-run cannot tell: {wide.batch_not_cast[0]}"
    if wide.error is not None:
        return False, f"in float64 the run raised {type(wide.error).__name__}"
    wide_step = curve_measures.first_nonfinite(wide.losses)
    if wide_step is None:
        done = "memorized" if wide.reached else "stayed finite"
        return True, (
            f"in float64 the loss {done}: {wide.losses[0]:.4g} -> {wide.losses[-1]:.4g}"
            f" in {wide.steps} steps"
        )
    if wide_step > step:
        return True, f"in float64 the loss stays finite until step {wide_step}"
    return (
        False,
        f"in float64 the loss is {wide.losses[wide_step]} at step {wide_step} too",
    )


def _grad_trend(evidence: Evidence) -> str:
    norms = [n for n in evidence.grad_norms if math.isfinite(n)]
    if not norms:
        return "gradient norm non-finite from the first step"
    return (
        f"gradient norm {evidence.grad_norms[0]:.3g} at step 0, up to {max(norms):.3g}"
        f" before the loss broke"
    )


def _module(name: str) -> str:
    return repr(name) if name else "the model itself"
