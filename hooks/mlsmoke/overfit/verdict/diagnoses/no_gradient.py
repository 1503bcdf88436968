"""``no-gradient``: parameters that get no gradient, or a loss that does not depend on
the parameters at all.

Causes: frozen with ``requires_grad=False``; detached by ``.detach()``, ``.data``,
``.item()`` or a ``torch.no_grad()`` inside forward; modules never used. Lists them by
name, with their share of all parameters. Two causes are read from more evidence: a
trainable tensor forward makes anew at every call (a copy of a parameter through
``.item()``, ``.tolist()`` or ``torch.tensor(value)``, see ``fresh_leaves.py``), and
an output that does not change when the parameters do (every gradient zero: a softmax
over a dimension of size 1, see ``constant_output.py``).

The rules are here. The parameters without a gradient, grouped by cause and listed,
are read in ``_gradless.py``; the frozen cause is checked on a copy in
``_gradless_checks.py``; a loss cut from the parameters is reported in
``_graph_cut.py`` and an output constant in them in ``_constant_gradient.py``.
"""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import constant_output, curve, forward_probes
from mlsmoke.overfit.verdict.diagnoses import (
    _constant_gradient,
    _errors,
    _gradless,
    _gradless_checks,
    _graph_cut,
)
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = _gradless.CODE
UNUSED = _gradless.UNUSED
DETACHED = _gradless.DETACHED
# A curve whose swings (dropout's noise, or too high an lr) hide its shape: only
# trainable parameters that forward uses and that still get no gradient are blamed.
NOISY = (curve.OSCILLATING,)


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if _graph_cut.loss_is_disconnected(evidence):
        return _graph_cut.disconnected_loss(run)
    if not evidence.stopped_short():
        return None
    cut = _graph_cut.copied_each_call(run)
    cut = cut or _constant_gradient.unchanging_output(run)
    if cut is not None:
        return cut
    shape = curve.classify_curve(evidence.losses, evidence.target).shape
    if shape not in (curve.PLATEAU, curve.FLOOR, curve.FALLING_TOO_SLOWLY, *NOISY):
        return None
    causes = _gradless.gradless_parameters(evidence)
    if shape in NOISY:  # the swings may have another cause; a cut graph has none
        causes = {c: names for c, names in causes.items() if c == DETACHED}
    sizes = forward_probes.parameter_sizes(run)
    unused = causes.get(UNUSED)
    if unused and not _gradless.blames_unused(unused, evidence, sizes):
        del causes[UNUSED]  # a spare head or pooler: reported, not blamed
    marks, checked = _gradless_checks.checked(run, causes)
    if not causes:
        return None
    names = [name for group in causes.values() for name in group]
    lines = [
        f"{cause}: {_gradless.listed(group, evidence)}"
        for cause, group in causes.items()
    ]
    lines += _unchanged_loss(evidence)
    lines += [f"on a copy of the model, {text}" for text in checked.values()]
    return Diagnosis(
        CODE,
        f"{len(names)} of {len(evidence.requires_grad)} parameter tensors get no"
        f" gradient ({_gradless.share(names, sizes)})",
        lines,
        [f"{_gradless.SUGGESTION_BY_CAUSE[cause]}  {marks[cause]}" for cause in causes],
    )


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
    place, lines = _constant_gradient.where_constant(found)
    lines = ["the loss is exactly 0 at init, and its backward gives every trainable"
             " parameter a zero gradient"] + lines  # fmt: skip
    lines += [f"the first forward warned: {text}" for text in evidence.forward_warnings]
    return Diagnosis(
        CODE,
        f"{place} does not change when the parameters do: the loss is 0 and no"
        " gradient reaches any parameter",
        lines,
        _constant_gradient.CONSTANT,
    )


def report_unused(run: GateRun, diagnosis: Diagnosis) -> Diagnosis:
    """A failure another cause explains still lists the modules forward never
    calls, as not blamed."""
    evidence = run.evidence
    if diagnosis.code in (CODE, "memorized") or evidence.error is not None:
        return diagnosis
    unused = _gradless.gradless_parameters(evidence).get(UNUSED)
    if unused:
        listed = _gradless.listed(unused, evidence)
        diagnosis.evidence.append(f"{UNUSED}, not blamed for this failure: {listed}")
    return diagnosis


def _unchanged_loss(evidence: Evidence) -> list[str]:
    trainable = [n for n, on in evidence.requires_grad.items() if on]
    learning = [n for n in trainable if evidence.first_grads.get(n)]
    if not learning:
        return []
    return [f"only these get a gradient: {_gradless.listed(learning, evidence)}"]
