"""Which kinds of repair the failed step's tensors point at, and at which fields.

A repair of a kind nothing points at could make the step run for another reason than
the failure's (one-hot labels that are in range make a range error go away, and change
what they mean), so only the kinds with evidence are tried, the most direct first:

- ``range``: values outside what the step allows, with shapes that agree (class
  indices beyond the output's width, a distribution's value outside its support);
- ``cast``: a tensor of the failing frame in a dtype its operation refuses;
- ``shape``: a target of the failing frame in neither shape a loss takes beside the
  output, a one-hot target, or a layer's input of another size than the layer's own.

Within a kind, the fields that hold the very tensor the evidence is about come first.
When nothing points anywhere (a first loss that is not finite, an error raised where
no tensor is at hand) every kind is tried, in the order of ``repairs.KINDS``: the
repair that runs is then the only evidence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from mlsmoke.overfit.verdict.diagnoses import _tensor_evidence as tensors
from mlsmoke.overfit.verdict.diagnoses._tensor_evidence import Frame, Output

RANGE, CAST, SHAPE = "range", "cast", "shape"


@dataclass(frozen=True)
class Signs:
    """The kinds of repair the evidence points at, the most direct first, and the
    batch fields holding the tensors it is about."""

    kinds: list[str] = field(default_factory=list)
    fields: set[str] = field(default_factory=set)


def pointed_at(
    fields: Iterable[tuple[str, Any]], chains: list[list[Frame]], output: Output
) -> Signs:
    """What the evidence points at; ``chains`` are the frames of each error of the
    chain, innermost first."""
    fields = [(n, v) for n, v in fields if isinstance(v, torch.Tensor)]
    raised = [f for f in (tensors.raised_frame(c) for c in chains) if f is not None]
    found, about = Signs(), []
    outside = tensors.outside_values(fields, chains, output)
    if outside is not None:
        found.kinds.append(RANGE)
        about.append(outside.tensor)
    for kind, named in (
        (CAST, [(f, tensors.refused_dtype(f)) for f in raised]),
        (SHAPE, [(f, tensors.disagreeing_shape(f, output)) for f in raised]),
    ):
        held = [frame.tensors[name] for frame, name in named if name is not None]
        if held:
            found.kinds.append(kind)
            about += held
    found.fields.update(
        name for name, value in fields if any(_same(value, t) for t in about)
    )
    return found


def _same(field_value: torch.Tensor, tensor: torch.Tensor | None) -> bool:
    """The field holds ``tensor``: the same object, or the same values (the gate's
    run had its own copy of the batch, maybe on another device)."""
    if tensor is None:
        return False
    if field_value is tensor:
        return True
    if field_value.shape != tensor.shape or field_value.dtype != tensor.dtype:
        return False
    return bool(torch.equal(field_value, tensor.detach().to(field_value.device)))
