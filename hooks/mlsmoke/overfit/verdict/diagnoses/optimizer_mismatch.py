"""``optimizer-mismatch``: the optimizer does not hold the model's parameters.

An optimizer built over the data tensors, over another model, or over part of the model
by mistake updates something else, and the loss stalls without an error. The engine
compares the optimizer's ``param_groups`` with ``model.parameters()`` both ways; this
fails when parameters the loss depends on are missing from it, and names what it holds
instead.
"""

from __future__ import annotations

from mlsmoke.overfit.training.bookkeeping import listed
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "optimizer-mismatch"

SUGGESTIONS = [
    "build the optimizer over the model's own parameters: Adam(model.parameters())"
    " (the optimizer callable receives them as its argument)",
    "freeze what should not train with requires_grad_(False), not by leaving it out of"
    " the optimizer",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if evidence.memorized or evidence.error is not None:
        return None
    missing = untrained(evidence)
    if not missing:
        return None
    total = sum(evidence.requires_grad.values())
    lines = [
        f"the loss depends on, but the optimizer lacks: {', '.join(listed(missing))}"
    ]
    if evidence.optimizer_extra:
        held = ", ".join(listed(evidence.optimizer_extra))
        lines.append(f"the optimizer holds instead: {held}")
    if evidence.losses:
        lines.append(
            f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g}"
            f" in {evidence.steps} steps"
        )
    summary = (
        f"the optimizer lacks {len(missing)} of the model's {total} trainable"
        " parameter tensors"
    )
    if evidence.optimizer_extra:
        summary += f" and holds {len(evidence.optimizer_extra)} tensors the model does"
        summary += " not own"
    return Diagnosis(CODE, summary, lines, SUGGESTIONS)


def untrained(evidence: Evidence) -> list[str]:
    """The model's trainable parameters missing from the optimizer that the loss
    depends on (they got a gradient), or all of them when no gradient was taken."""
    missing = evidence.optimizer_missing
    if not evidence.first_grads:
        return list(missing)
    return [name for name in missing if evidence.first_grads.get(name) is not None]
