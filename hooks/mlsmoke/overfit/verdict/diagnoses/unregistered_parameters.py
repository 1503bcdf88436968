"""``unregistered-parameters``: the loss depends on trainable tensors the model does
not own, and the optimizer never updates them.

Layers kept in a plain Python list (not ``nn.ModuleList``), a bare tensor with
``requires_grad=True`` (not ``nn.Parameter``): ``model.parameters()`` misses them, so
the optimizer, ``.to(device)`` and ``state_dict()`` do too. The engine walks the first
loss's autograd graph down to its leaves. A leaf made anew at every call is not one
of them: that is a cut graph (``no-gradient``). A failure only where it blocks
memorization; otherwise the ``unregistered-parameters`` warning says it.
"""

from __future__ import annotations

import math

from mlsmoke.overfit.training.bookkeeping import listed
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.verdict import fresh_leaves
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
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
    frozen = never_trained(evidence)
    if not frozen or fresh_leaves.all_fresh(run):
        return None  # made anew at each call: a cut graph (no-gradient says it)
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
        SUGGESTIONS,
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
