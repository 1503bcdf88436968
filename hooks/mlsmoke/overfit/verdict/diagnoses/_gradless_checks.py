"""The frozen cause of ``no-gradient`` checked on a copy of the model: its
parameters unfrozen, or, when part of the model trains by design, a higher lr tried
first. The causes in forward's code are marked not checked: no copy can undo them."""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import lr_range
from mlsmoke.overfit.verdict.diagnoses import _gradless
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import raise_lr, unfreeze

NOT_CHECKED = {
    _gradless.DETACHED: "(not checked: the cut is in forward's code, which no copy"
    " can undo)",
    _gradless.UNUSED: "(not checked: forward's code decides what it calls, which no"
    " copy can change)",
}


def checked(
    run: GateRun, causes: dict[str, list[str]]
) -> tuple[dict[str, str], dict[str, str]]:
    """Each cause's mark, and what its intervention did where one ran; a cause its
    intervention refutes is removed from
    ``causes``. Frozen parameters are unfrozen in a copy; when part of the model
    trains (adapters on a frozen base, a head on a frozen encoder: a design the
    model declares), a higher lr that memorizes is the cause instead."""
    marks = {cause: NOT_CHECKED[cause] for cause in causes if cause in NOT_CHECKED}
    frozen = causes.get(_gradless.FROZEN)
    if not frozen:
        return marks, {}
    if _part_trains(run.evidence) and lr_range.likely_up(run.evidence):
        if raise_lr.check(run).memorized:
            del causes[_gradless.FROZEN]  # lr-too-low names the rate that memorized
            return marks, {}
    outcome = unfreeze.check(run, frozen)
    if outcome.refutes:
        del causes[_gradless.FROZEN]
    elif outcome.confirms:
        marks[_gradless.FROZEN] = outcome.mark()
    elif outcome.helped:
        marks[_gradless.FROZEN] = f"(checked in part: {outcome.result()})"
    else:
        marks[_gradless.FROZEN] = f"(not checked: {outcome.result()})"
    return marks, {_gradless.FROZEN: outcome.result()}


def _part_trains(evidence: Evidence) -> bool:
    return any(evidence.first_grads.get(name) for name in evidence.requires_grad)
