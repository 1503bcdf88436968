"""``no-gradient``: parameters that get no gradient, or a loss that does not depend on
the parameters at all.

Causes: frozen with ``requires_grad=False``; detached by ``.detach()``, ``.data``,
``.item()`` or a ``torch.no_grad()`` inside forward; modules never used. Lists them by
name, with their share of all parameters.
"""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.verdict import curve, forward_probes
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "no-gradient"
SHOWN = 6
# Unused modules under this share of the weights are not blamed for a failure.
SPARE_MODULES = 0.05

_DISCONNECTED = (
    "does not require grad and does not have a grad_fn",
    "optimizer got an empty parameter list",
)

FROZEN = "frozen (requires_grad=False)"
UNUSED = "in modules never called by forward"
DETACHED = "cut from the loss (.detach(), .data or torch.no_grad())"

SUGGESTION_BY_CAUSE = {
    FROZEN: "unfreeze what should train: requires_grad=True (freeze only what you"
    " meant to)",
    UNUSED: "call every module you build in forward, and use its result",
    DETACHED: "remove .detach(), .data and torch.no_grad() from the path between the"
    " parameters and the loss (detach only copies kept for logging)",
}
GRAPH_CUT = [
    "return the loss tensor itself: .item() and torch.tensor(value) cut the graph",
    SUGGESTION_BY_CAUSE[DETACHED],
    SUGGESTION_BY_CAUSE[UNUSED],
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if _loss_is_disconnected(evidence):
        return _disconnected_loss(run)
    if not evidence.stopped_short():
        return None
    shape = curve.classify_curve(evidence.losses, evidence.target).shape
    if shape not in (curve.PLATEAU, curve.FLOOR, curve.FALLING_TOO_SLOWLY):
        return None
    causes = gradless_parameters(evidence)
    if not causes:
        return None
    sizes = forward_probes.parameter_sizes(run)
    names = [name for group in causes.values() for name in group]
    if set(causes) == {UNUSED} and _fraction(names, sizes) < SPARE_MODULES:
        return None  # a spare head or pooler left unused is common and harmless
    lines = [f"{cause}: {_listed(group, evidence)}" for cause, group in causes.items()]
    lines += _unchanged_loss(evidence)
    return Diagnosis(
        CODE,
        f"{len(names)} of {len(evidence.requires_grad)} parameter tensors get no"
        f" gradient ({_share(names, sizes)})",
        lines,
        [SUGGESTION_BY_CAUSE[cause] for cause in causes],
    )


def _unchanged_loss(evidence: Evidence) -> list[str]:
    trainable = [n for n, on in evidence.requires_grad.items() if on]
    learning = [n for n in trainable if evidence.first_grads.get(n)]
    if not learning:
        return []
    return [f"only these get a gradient: {_listed(learning, evidence)}"]


def gradless_parameters(evidence: Evidence) -> dict[str, list[str]]:
    """Parameters without a gradient after the first backward, grouped by cause."""
    used = set(evidence.module_order)
    causes: dict[str, list[str]] = {}
    for name, trainable in evidence.requires_grad.items():
        if not trainable:
            cause = FROZEN
        elif evidence.first_grads.get(name, 0.0) is not None:
            continue
        elif name.rpartition(".")[0] not in used:
            cause = UNUSED
        else:
            cause = DETACHED
        causes.setdefault(cause, []).append(name)
    return causes


def _loss_is_disconnected(evidence: Evidence) -> bool:
    error = evidence.error
    if isinstance(error, ProjectProblem):
        return error.code == "loss-no-grad"
    return error is not None and _errors.mentions(evidence, _DISCONNECTED)


def _disconnected_loss(run: GateRun) -> Diagnosis:
    evidence = run.evidence
    frozen = [name for name, on in evidence.requires_grad.items() if not on]
    lines = [_errors.raised(evidence)]
    suggestions = GRAPH_CUT
    if frozen:
        suggestions = [SUGGESTION_BY_CAUSE[FROZEN]] + GRAPH_CUT
    if frozen and len(frozen) == len(evidence.requires_grad):
        lines.append(
            "every parameter is frozen (requires_grad=False):"
            f" {_listed(frozen, evidence)}"
        )
    elif frozen:
        lines.append(f"frozen (requires_grad=False): {_listed(frozen, evidence)}")
    else:
        lines.append(
            "every parameter is trainable, so the graph is cut between them and the"
            " loss: .item(), .detach(), .data, torch.tensor(...) or torch.no_grad()"
        )
    return Diagnosis(
        CODE,
        "the loss does not depend on any trainable parameter",
        lines,
        suggestions,
    )


def _fraction(names: list[str], sizes: dict[str, int]) -> float:
    total = sum(sizes.values())
    return sum(sizes.get(name, 0) for name in names) / total if total else 1.0


def _share(names: list[str], sizes: dict[str, int]) -> str:
    total = sum(sizes.values())
    if not total:
        return "an unknown share of the weights"
    count = sum(sizes.get(name, 0) for name in names)
    return f"{count:,} of {total:,} weights, {percent(count, total)}"


def _with_aliases(name: str, evidence: Evidence) -> str:
    aliases = evidence.parameter_aliases.get(name)
    return f"{name} (also {', '.join(aliases)})" if aliases else name


def percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage that reads 0% or 100% only when it is:
    a model with one trainable weight in 200 is 99.5% frozen, not 100%."""
    share = 100 * part / whole
    text = f"{share:.0f}"
    if 0 < part < whole and text in ("0", "100"):
        text = f"{share:.1f}"
        if text in ("0.0", "100.0"):
            return "<0.1%" if part < whole - part else ">99.9%"
    return f"{text}%"


def _listed(names: list[str], evidence: Evidence) -> str:
    """The names, each with every other name the model holds it under."""
    shown = ", ".join(_with_aliases(name, evidence) for name in names[:SHOWN])
    if len(names) > SHOWN:
        shown += f", and {len(names) - SHOWN} more"
    return shown
