"""``no-gradient``: parameters that get no gradient, or a loss that does not depend on
the parameters at all.

Causes: frozen with ``requires_grad=False``; detached by ``.detach()``, ``.data``,
``.item()`` or a ``torch.no_grad()`` inside forward; modules never used. Lists them by
name, with their share of all parameters. Two causes are read from more evidence: a
trainable tensor forward makes anew at every call (a copy of a parameter through
``.item()``, ``.tolist()`` or ``torch.tensor(value)``, see ``fresh_leaves.py``), and
an output that does not change when the parameters do (every gradient zero: a softmax
over a dimension of size 1, see ``constant_output.py``).
"""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.verdict import (
    constant_output,
    curve,
    forward_probes,
    fresh_leaves,
    fresh_modules,
)
from mlsmoke.overfit.verdict import lr_range
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import raise_lr, unfreeze
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
    cut = _copied_each_call(run) or _constant_output(run)
    if cut is not None:
        return cut
    shape = curve.classify_curve(evidence.losses, evidence.target).shape
    if shape not in (curve.PLATEAU, curve.FLOOR, curve.FALLING_TOO_SLOWLY):
        return None
    causes = gradless_parameters(evidence)
    sizes = forward_probes.parameter_sizes(run)
    if UNUSED in causes and not blames_unused(causes[UNUSED], evidence, sizes):
        del causes[UNUSED]  # a spare head or pooler: reported, not blamed
    marks, checked = _checked(run, causes)
    if not causes:
        return None
    names = [name for group in causes.values() for name in group]
    lines = [f"{cause}: {_listed(group, evidence)}" for cause, group in causes.items()]
    lines += _unchanged_loss(evidence)
    lines += [f"on a copy of the model, {text}" for text in checked.values()]
    return Diagnosis(
        CODE,
        f"{len(names)} of {len(evidence.requires_grad)} parameter tensors get no"
        f" gradient ({_share(names, sizes)})",
        lines,
        [f"{SUGGESTION_BY_CAUSE[cause]}  {marks[cause]}" for cause in causes],
    )


NOT_CHECKED = {
    DETACHED: "(not checked: the cut is in forward's code, which no copy can undo)",
    UNUSED: "(not checked: forward's code decides what it calls, which no copy can"
    " change)",
}


def _checked(
    run: GateRun, causes: dict[str, list[str]]
) -> tuple[dict[str, str], dict[str, str]]:
    """Each cause's mark, and what its intervention did where one ran; a cause its
    intervention refutes is removed from
    ``causes``. Frozen parameters are unfrozen in a copy; when part of the model
    trains (adapters on a frozen base, a head on a frozen encoder: a design the
    model declares), a higher lr that memorizes is the cause instead."""
    marks = {cause: NOT_CHECKED[cause] for cause in causes if cause in NOT_CHECKED}
    frozen = causes.get(FROZEN)
    if not frozen:
        return marks, {}
    if _part_trains(run.evidence) and lr_range.likely_up(run.evidence):
        if raise_lr.check(run).memorized:
            del causes[FROZEN]  # lr-too-low names the rate that memorized
            return marks, {}
    outcome = unfreeze.check(run, frozen)
    if outcome.refutes:
        del causes[FROZEN]
    elif outcome.confirms:
        marks[FROZEN] = outcome.mark()
    elif outcome.helped:
        marks[FROZEN] = f"(checked in part: {outcome.result()})"
    else:
        marks[FROZEN] = f"(not checked: {outcome.result()})"
    return marks, {FROZEN: outcome.result()}


def report_unused(run: GateRun, diagnosis: Diagnosis) -> Diagnosis:
    """A failure another cause explains still lists the modules forward never
    calls, as not blamed."""
    evidence = run.evidence
    if diagnosis.code in (CODE, "memorized") or evidence.error is not None:
        return diagnosis
    unused = gradless_parameters(evidence).get(UNUSED)
    if unused:
        diagnosis.evidence.append(
            f"{UNUSED}, not blamed for this failure: {_listed(unused, evidence)}"
        )
    return diagnosis


def _part_trains(evidence: Evidence) -> bool:
    return any(evidence.first_grads.get(name) for name in evidence.requires_grad)


def blames_unused(names: list[str], evidence: Evidence, sizes: dict[str, int]) -> bool:
    """Modules never called are named as a cause when they hold a real share of the
    weights and forward skips over them: a module declared after them is called (a
    stage of the pipeline left out). One declared after every called module (a
    pooler, a spare head) is an output forward does not use, by design or not, and
    no reason the batch is not memorized."""
    if _fraction(names, sizes) < SPARE_MODULES:
        return False
    order = list(evidence.requires_grad)
    last_unused = max(order.index(name) for name in names)
    called = set(evidence.module_order)
    return any(name.rpartition(".")[0] in called for name in order[last_unused + 1 :])


COPIED = (
    "use the parameter itself in forward: .item(), .tolist() and torch.tensor(value)"
    " copy its value into a new tensor at every call, and the copy, not the"
    " parameter, gets the gradient"
)


def _copied_each_call(run: GateRun) -> Diagnosis | None:
    """The loss depends on trainable tensors forward makes anew at every call: the
    graph is cut between them and the parameters they were copied from."""
    fresh = fresh_leaves.fresh_leaves(run)
    if not fresh or not fresh_leaves.all_fresh(run):
        return None
    if fresh_modules.fresh_modules(run):
        return None  # a module's own parameters, not copies: a layer built anew
    evidence = run.evidence
    sources = [leaf.copy_of for leaf in fresh if leaf.copy_of]
    gradless = gradless_parameters(evidence).get(DETACHED, [])
    named = sources or gradless
    lines = [
        f"forward makes a new trainable tensor at every call: {leaf.described}"
        + (f", a copy of parameter {leaf.copy_of}" if leaf.copy_of else "")
        + " (a different object at each call)"
        for leaf in fresh
    ]
    if gradless:
        lines.append(f"{DETACHED}: {_listed(gradless, run.evidence)}")
    lines.append(
        f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g} in"
        f" {evidence.steps} steps"
    )
    subject = (
        f"parameter {_listed(named, run.evidence)}"
        if named
        else "the parameters it copies"
    )
    return Diagnosis(
        CODE,
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


CONSTANT = [
    "give softmax, log_softmax and normalizations the dimension of the classes"
    " (dim=-1): over a dimension of size 1 they return 1.0 (or 0.0) whatever comes"
    " in",
    "print the output's shape where it is normalized: # (B, C)",
]


@diagnoser(CODE)
def diagnose_zero_loss(run: GateRun) -> Diagnosis | None:
    """A loss of exactly 0 at init, which no target-ratio can scale, and a backward
    that moves no parameter: the output is a constant that the loss already fits
    (log-probabilities of 0 from a softmax over one element)."""
    evidence = run.evidence
    if _errors.problem_code(evidence) != "target-ratio-undefined":
        return None
    if evidence.losses[:1] != [0.0]:
        return None
    found = constant_output.find_constant(run)
    if found is None or not found.parameters_still:
        return None
    place, lines = _where_constant(found)
    lines = ["the loss is exactly 0 at init, and its backward gives every trainable"
             " parameter a zero gradient"] + lines  # fmt: skip
    lines += [f"the first forward warned: {text}" for text in evidence.forward_warnings]
    return Diagnosis(
        CODE,
        f"{place} does not change when the parameters do: the loss is 0 and no"
        " gradient reaches any parameter",
        lines,
        CONSTANT,
    )


def _constant_output(run: GateRun) -> Diagnosis | None:
    """Every trainable parameter's gradient is exactly zero and the loss never
    moved: the output does not change when the parameters do. Names the operation
    whose output is constant where the modules show it."""
    evidence = run.evidence
    trainable = [n for n, on in evidence.requires_grad.items() if on]
    norms = [evidence.first_grads.get(name) for name in trainable]
    if not trainable or any(norms) or 0.0 not in norms:
        return None
    if len(set(evidence.losses)) != 1:
        return None
    lines = [
        f"every gradient is zero at the first step ({len(trainable)} parameter"
        f" tensors), and the loss stayed {evidence.losses[0]:.4g} for"
        f" {evidence.steps} steps"
    ]
    found = constant_output.find_constant(run)
    place = "the model's output"
    if found is not None:
        place, more = _where_constant(found)
        lines += more
    lines += [f"the first forward warned: {text}" for text in evidence.forward_warnings]
    return Diagnosis(
        CODE,
        f"{place} does not change when the parameters do: no gradient reaches"
        " any of them",
        lines,
        CONSTANT,
    )


def _where_constant(found: constant_output.ConstantFinding) -> tuple[str, list[str]]:
    """The operation whose output is constant, and the lines that show it."""
    module = found.constant_module()
    if module is not None and module.leaf:
        return (
            f"module {module.name!r} ({module.kind})",
            [
                f"module {module.name!r} ({module.kind}) outputs {module.constant:.4g}"
                f" everywhere, shape {module.shape}"
            ],
        )
    lines = []
    cut = found.last_without_gradient()
    output = found.model_output
    if output is not None and output.constant is not None:
        lines.append(
            f"the model's output is {output.constant:.4g} everywhere, shape"
            f" {output.shape}"
            + (
                ": a softmax or normalization over a dimension of size 1 gives" " that"
                if 1 in output.shape or output.constant in (0.0, 1.0)
                else ""
            )
        )
    if module is not None:
        place = f"the forward of module {module.name!r}"
    elif output is not None and output.grads and not output.gets_gradient:
        place = "the loss"
        lines.append(
            "the model's output gets a zero gradient: the loss's own code"
            " makes it a constant"
        )
    else:
        place = "the model's forward"
    if cut is not None:
        place += f", after module {cut.name!r},"
        lines.append(
            f"module {cut.name!r} ({cut.kind}) is the last whose output"
            " gets a gradient of zero: the operation after it makes a"
            " constant"
        )
    return place, lines


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
