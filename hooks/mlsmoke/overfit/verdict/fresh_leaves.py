"""Trainable tensors that forward creates anew at every call: a cut graph, not a
parameter someone forgot to register.

``torch.tensor(p.item(), requires_grad=True)``, ``torch.tensor(p.tolist(), ...)`` or
any copy of a value into a new leaf gives the loss a trainable tensor the model does
not own. Registering it would not help: the next call makes another one, and the
parameter it was copied from gets no gradient. The probe calls the loss twice on a
fresh model and compares the leaves' identities; a leaf of the first call that the
second does not reuse was made by that call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from mlsmoke.overfit.training import bookkeeping
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


@dataclass(frozen=True)
class FreshLeaf:
    described: (
        str  # what it is, e.g. "a float32 tensor (4, 10) the model does not hold"
    )
    copy_of: str | None  # the registered parameter whose values it holds


def fresh_leaves(run: GateRun) -> list[FreshLeaf]:
    """The unregistered leaves of the loss that a second call does not reuse."""
    if not run.evidence.unregistered:
        return []
    return remember(run, "fresh-leaves", lambda: _compare_two_calls(run))


def all_fresh(run: GateRun) -> bool:
    """Every unregistered leaf the run recorded is made anew at each call."""
    unregistered = run.evidence.unregistered
    return bool(unregistered) and len(fresh_leaves(run)) >= len(unregistered)


def _compare_two_calls(run: GateRun) -> list[FreshLeaf]:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
            model.train()
            first = _leaves(forward_probes.loss_of(run, model, batch), model, batch)
            second = _leaves(forward_probes.loss_of(run, model, batch), model, batch)
    except Exception:
        return []
    reused = {id(leaf) for leaf in second}
    parameters = dict(model.named_parameters())
    return [
        FreshLeaf(
            bookkeeping.describe_tensor(leaf, model, batch),
            _copied_from(leaf, parameters),
        )
        for leaf in first
        if id(leaf) not in reused
    ]


def _leaves(loss: Any, model: torch.nn.Module, batch: Any) -> list[torch.Tensor]:
    if not isinstance(loss, torch.Tensor):
        return []
    return bookkeeping.unowned_leaves(loss, model, batch)


def _copied_from(
    leaf: torch.Tensor, parameters: dict[str, torch.nn.Parameter]
) -> str | None:
    """The parameter holding the same values as ``leaf`` (its source, when forward
    copied a parameter through .item(), .tolist() or torch.tensor)."""
    with torch.no_grad():
        for name, parameter in parameters.items():
            if parameter.shape == leaf.shape and torch.equal(
                parameter.detach().to(leaf.device, leaf.dtype), leaf.detach()
            ):
                return name
    return None
