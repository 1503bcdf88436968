"""``unregistered-parameters``: the loss depends on trainable tensors the model does
not own (layers in a plain Python list, a bare tensor with ``requires_grad=True``).
``state_dict()`` and ``.to(device)`` miss them even when the optimizer was given them;
read from the engine's walk of the first loss's autograd graph."""

from __future__ import annotations

from mlsmoke.overfit.training.bookkeeping import listed
from mlsmoke.overfit.verdict import fresh_leaves
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "unregistered-parameters"


def check(run: GateRun) -> list[Warning]:
    leaves = run.evidence.unregistered
    if not leaves or fresh_leaves.all_fresh(run):
        return []  # made anew at each call: registering them would not help
    return [
        Warning(
            CODE,
            f"the loss depends on {len(leaves)} trainable tensors the model does not"
            f" register: {', '.join(listed(leaves))}; model.parameters(), state_dict()"
            " and .to(device) miss them: use nn.ModuleList/nn.ModuleDict for layers,"
            " nn.ParameterList/nn.ParameterDict for parameters kept in a list or dict,"
            " and nn.Parameter for bare tensors",
        )
    ]
