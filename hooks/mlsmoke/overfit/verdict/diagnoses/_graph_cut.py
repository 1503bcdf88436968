"""A loss cut from the parameters, for ``no-gradient``: a loss that depends on no
trainable parameter at all, and trainable tensors forward copies anew from the
parameters at every call (``.item()``, ``.tolist()``, ``torch.tensor(value)``)."""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.verdict import fresh_leaves, fresh_modules
from mlsmoke.overfit.verdict.diagnoses import _errors, _gradless
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

_DISCONNECTED = (
    "does not require grad and does not have a grad_fn",
    "optimizer got an empty parameter list",
)
GRAPH_CUT = [
    "return the loss tensor itself: .item() and torch.tensor(value) cut the graph",
    _gradless.SUGGESTION_BY_CAUSE[_gradless.DETACHED],
    _gradless.SUGGESTION_BY_CAUSE[_gradless.UNUSED],
]


def loss_is_disconnected(evidence: Evidence) -> bool:
    error = evidence.error
    if isinstance(error, ProjectProblem):
        return error.code == "loss-no-grad"
    return error is not None and _errors.mentions(evidence, _DISCONNECTED)


def disconnected_loss(run: GateRun) -> Diagnosis:
    evidence = run.evidence
    frozen = [name for name, on in evidence.requires_grad.items() if not on]
    lines = [_errors.raised(evidence)]
    suggestions = GRAPH_CUT
    if frozen:
        suggestions = [_gradless.SUGGESTION_BY_CAUSE[_gradless.FROZEN]] + GRAPH_CUT
    if frozen and len(frozen) == len(evidence.requires_grad):
        lines.append(
            "every parameter is frozen (requires_grad=False):"
            f" {_gradless.listed(frozen, evidence)}"
        )
    elif frozen:
        lines.append(
            f"frozen (requires_grad=False): {_gradless.listed(frozen, evidence)}"
        )
    else:
        lines.append(
            "every parameter is trainable, so the graph is cut between them and the"
            " loss: .item(), .detach(), .data, torch.tensor(...) or torch.no_grad()"
        )
    return Diagnosis(
        _gradless.CODE,
        "the loss does not depend on any trainable parameter",
        lines,
        suggestions,
    )


COPIED = (
    "use the parameter itself in forward: .item(), .tolist() and torch.tensor(value)"
    " copy its value into a new tensor at every call, and the copy, not the"
    " parameter, gets the gradient"
)


def copied_each_call(run: GateRun) -> Diagnosis | None:
    """The loss depends on trainable tensors forward makes anew at every call: the
    graph is cut between them and the parameters they were copied from."""
    fresh = fresh_leaves.fresh_leaves(run)
    if not fresh or not fresh_leaves.all_fresh(run):
        return None
    if fresh_modules.fresh_modules(run):
        return None  # a module's own parameters, not copies: a layer built anew
    evidence = run.evidence
    sources = [leaf.copy_of for leaf in fresh if leaf.copy_of]
    gradless = _gradless.gradless_parameters(evidence).get(_gradless.DETACHED, [])
    named = sources or gradless
    lines = [
        f"forward makes a new trainable tensor at every call: {leaf.described}"
        + (f", a copy of parameter {leaf.copy_of}" if leaf.copy_of else "")
        + " (a different object at each call)"
        for leaf in fresh
    ]
    if gradless:
        lines.append(
            f"{_gradless.DETACHED}: {_gradless.listed(gradless, run.evidence)}"
        )
    lines.append(
        f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g} in"
        f" {evidence.steps} steps"
    )
    subject = (
        f"parameter {_gradless.listed(named, run.evidence)}"
        if named
        else "the parameters it copies"
    )
    return Diagnosis(
        _gradless.CODE,
        f"{subject} gets no gradient: forward copies it into a new tensor at"
        " every call (.item(), .tolist() or torch.tensor(value)), which cuts the"
        " graph",
        lines,
        [
            COPIED,
            "registering the copy (nn.Parameter) would not help: the next call"
            " makes another one",
        ],
    )
