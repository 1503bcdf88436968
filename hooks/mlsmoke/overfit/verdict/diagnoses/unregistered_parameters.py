"""``unregistered-parameters``: the loss depends on trainable tensors the model does
not own, and the optimizer never updates them.

Layers kept in a plain Python list (not ``nn.ModuleList``), a bare tensor with
``requires_grad=True`` (not ``nn.Parameter``): ``model.parameters()`` misses them, so
the optimizer, ``.to(device)`` and ``state_dict()`` do too. The engine walks the first
loss's autograd graph down to its leaves. A leaf made anew at every call is not one
of them: that is a cut graph (``no-gradient``). A failure only where it blocks
memorization; otherwise the ``unregistered-parameters`` warning says it. Checked by
registering them in a copy (``register_plain_attributes.py``): a copy that trains no
closer refutes the cause. A module forward builds anew at every call
(``fresh_modules.py``) is named as such, checked by building it once and registering
it in a copy.
"""

from __future__ import annotations

import math

from mlsmoke.overfit.training.bookkeeping import listed
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.verdict import fresh_leaves, fresh_modules
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import (
    register_fresh_module,
    register_plain_attributes,
    runner,
)
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "unregistered-parameters"

SUGGESTIONS = [
    "keep submodules in nn.ModuleList / nn.ModuleDict, not a Python list or dict",
    "keep parameters held in a list or dict in nn.ParameterList / nn.ParameterDict",
    "wrap bare trainable tensors in nn.Parameter (and buffers in register_buffer)",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if _no_registered_parameters(evidence):
        return Diagnosis(
            CODE,
            "the model registers no parameters: its trainable tensors sit in plain"
            " attributes",
            [f"not registered: {', '.join(listed(evidence.unregistered))}"],
            SUGGESTIONS,
        )
    if evidence.memorized or evidence.error is not None:
        return None
    if evidence.losses and not math.isfinite(evidence.losses[0]):
        return None  # the loss was broken before any tensor could train
    built = fresh_modules.fresh_modules(run)
    if built:
        return _built_in_forward(run, built)
    frozen = never_trained(evidence)
    if not frozen or fresh_leaves.all_fresh(run):
        return None  # made anew at each call: a cut graph (no-gradient says it)
    outcome = register_plain_attributes.check(run)
    frozen_too = [name for name, on in evidence.requires_grad.items() if not on]
    if outcome.refutes and not frozen_too:
        return None
    outcome.held_back = outcome.refutes
    lines = [
        "the loss depends on these trainable tensors, which model.parameters() does"
        f" not list, so the optimizer never updates them: {', '.join(listed(frozen))}"
    ]
    if evidence.losses:
        lines.append(
            f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g}"
            f" in {evidence.steps} steps"
        )
    return Diagnosis(
        CODE,
        f"{len(frozen)} tensors the loss depends on are not registered with the model,"
        " so they never train",
        lines,
        _marked(SUGGESTIONS, _suggestion_for(frozen[0]), _mark(outcome, frozen_too)),
    )


def _suggestion_for(described: str) -> int:
    """Which suggestion fixes a leaf described as ``experts[3].0.weight (...)`` (a
    module in a container), ``scales[0] (...)`` (a tensor in one) or ``users (...)``
    (a bare tensor)."""
    path = described.split(" ", 1)[0]
    if "[" not in path:
        return 2
    return 0 if "." in path.rsplit("]", 1)[-1] else 1


def _marked(suggestions: list[str], index: int, mark: str) -> list[str]:
    return [s + f"  {mark}" if i == index else s for i, s in enumerate(suggestions)]


def _mark(outcome: runner.Outcome, frozen: list[str]) -> str:
    """A copy that trains no closer refutes the cause, unless frozen parameters
    hold that copy back as well: then it shows nothing about these tensors."""
    if outcome.confirms:
        return outcome.mark()
    if outcome.helped:
        return f"(checked in part: {outcome.result()})"
    if outcome.held_back:
        return (
            f"(not checked: {outcome.result()}; {len(frozen)} frozen parameter"
            " tensors hold the copy back as well)"
        )
    return f"(not checked: {outcome.result()})"


def _built_in_forward(
    run: GateRun, built: list[fresh_modules.FreshModule]
) -> Diagnosis | None:
    """Forward builds trainable modules at every call; named when the copy that
    builds each once, registered before the optimizer, memorizes."""
    kinds = sorted({module.kind for module in built})
    outcome = register_fresh_module.check(run, kinds)
    if outcome.refutes:
        return None
    mark = outcome.mark() if outcome.confirms else f"(not checked: {outcome.result()})"
    evidence, first = run.evidence, built[0]
    lines = [
        f"forward builds a new {module.described} at every call"
        + (f", at {module.where}" if module.where else "")
        for module in built
    ]
    if evidence.losses:
        lines.append(
            f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g}"
            f" in {evidence.steps} steps"
        )
    return Diagnosis(
        CODE,
        f"forward builds a new {first.kind} at every call: its weights are new random"
        " ones at each step, and the optimizer, built before, never holds them",
        lines,
        [
            f"build the {first.kind} once, in __init__ (self.head ="
            f" nn.{first.kind}(...)), and call it in forward  {mark}",
            "a layer whose size is known only in forward: nn.Lazy* modules (e.g."
            " nn.LazyLinear) are built once, at the first call",
        ],
    )


def never_trained(evidence: Evidence) -> list[str]:
    """Unregistered leaves of the loss that the optimizer does not hold either."""
    held = set(evidence.optimizer_extra)
    return [leaf for leaf in evidence.unregistered if leaf not in held]


def _no_registered_parameters(evidence: Evidence) -> bool:
    error = evidence.error
    return (
        isinstance(error, ProjectProblem)
        and error.code == "no-parameters"
        and bool(evidence.unregistered)
    )
