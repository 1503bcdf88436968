"""An output that does not change when the parameters do, for ``no-gradient``:
every gradient zero and the loss never moved, and the operation whose output is
constant (a softmax over a dimension of size 1), read by ``constant_output.py``."""

from __future__ import annotations

from mlsmoke.overfit.verdict import constant_output
from mlsmoke.overfit.verdict.diagnoses import _gradless
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CONSTANT = [
    "give softmax, log_softmax and normalizations the dimension of the classes"
    " (dim=-1): over a dimension of size 1 they return 1.0 (or 0.0) whatever comes"
    " in",
    "print the output's shape where it is normalized: # (B, C)",
]


def unchanging_output(run: GateRun) -> Diagnosis | None:
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
        place, more = where_constant(found)
        lines += more
    lines += [f"the first forward warned: {text}" for text in evidence.forward_warnings]
    return Diagnosis(
        _gradless.CODE,
        f"{place} does not change when the parameters do: no gradient reaches"
        " any of them",
        lines,
        CONSTANT,
    )


def where_constant(found: constant_output.ConstantFinding) -> tuple[str, list[str]]:
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
