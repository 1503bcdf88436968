"""The parameters that get no gradient, grouped by cause (frozen, in modules forward
never calls, cut from the loss), whether unused modules are to blame, and how they
are listed: each name with its aliases, and their share of all the weights."""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence

CODE = "no-gradient"
SHOWN = 6
# Unused modules under this share of the weights are not blamed for a failure.
SPARE_MODULES = 0.05

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


def blames_unused(names: list[str], evidence: Evidence, sizes: dict[str, int]) -> bool:
    """Modules never called are named as a cause when they hold a real share of the
    weights and forward skips over them: a module declared after them is called (a
    stage of the pipeline left out). One declared after every called module (a
    pooler, a spare head) is an output forward does not use, by design or not, and
    no reason the batch is not memorized."""
    if fraction(names, sizes) < SPARE_MODULES:
        return False
    order = list(evidence.requires_grad)
    last_unused = max(order.index(name) for name in names)
    called = set(evidence.module_order)
    return any(name.rpartition(".")[0] in called for name in order[last_unused + 1 :])


def fraction(names: list[str], sizes: dict[str, int]) -> float:
    total = sum(sizes.values())
    return sum(sizes.get(name, 0) for name in names) / total if total else 1.0


def share(names: list[str], sizes: dict[str, int]) -> str:
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


def listed(names: list[str], evidence: Evidence) -> str:
    """The names, each with every other name the model holds it under."""
    shown = ", ".join(_with_aliases(name, evidence) for name in names[:SHOWN])
    if len(names) > SHOWN:
        shown += f", and {len(names) - SHOWN} more"
    return shown
