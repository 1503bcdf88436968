"""Which kinds of repair the failed step's tensors point at, and at which fields.

A repair of a kind nothing points at could make the step run for another reason than
the failure's (one-hot labels that are in range make a range error go away, and change
what they mean), so only the kinds with evidence are tried, the most direct first:

- ``range``: values outside what the step allows, with shapes that agree (class
  indices beyond the output's width, a distribution's value outside its support);
- ``cast``: a tensor of the failing frame in a dtype its operation refuses;
- ``shape``: a target of the failing frame in neither shape a loss takes beside the
  output, a one-hot target, or a layer's input of another size than the layer's own;
- ``contiguity``: nothing else is wrong, and the failing frame holds a batch field in
  a strided layout (a slice such as ``x[:, 1:]``), which ``.view()`` refuses.

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

RANGE, CAST, SHAPE, CONTIGUITY = "range", "cast", "shape", "contiguity"


@dataclass
class Signs:
    """The kinds of repair the evidence points at, the most direct first, and the
    batch fields holding the tensors it is about."""

    kinds: list[str] = field(default_factory=list)
    fields: set[str] = field(default_factory=set)


def pointed_at(
    fields: Iterable[tuple[str, Any]],
    chains: list[list[Frame]],
    output: Output,
    is_class_target: tensors.ClassTarget = tensors.shaped_as_classes,
) -> Signs:
    """What the evidence points at; ``chains`` are the frames of each error of the
    chain, innermost first; ``is_class_target`` tells class targets from other
    integers (timesteps, positions)."""
    fields = [(n, v) for n, v in fields if isinstance(v, torch.Tensor)]
    raised = [f for f in (tensors.raised_frame(c) for c in chains) if f is not None]
    found, about = Signs(), []
    outside = tensors.outside_values(fields, chains, output, is_class_target)
    if outside is not None:
        found.kinds.append(RANGE)
        about.append(outside.tensor)
    for kind, named in (
        (CAST, [(f, refused_dtype(f)) for f in raised]),
        (SHAPE, [(f, disagreeing_shape(f, output)) for f in raised]),
    ):
        held = [frame.tensors[name] for frame, name in named if name is not None]
        if held:
            found.kinds.append(kind)
            about += held
    strided = [t for f in raised for t in _inputs(f).values() if not t.is_contiguous()]
    if not found.kinds and strided and any(not v.is_contiguous() for _, v in fields):
        found.kinds.append(CONTIGUITY)  # values, dtypes and shapes agree: the layout
        about += strided
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


# --- dtypes ---------------------------------------------------------------------------


def refused_dtype(frame: Frame) -> str | None:
    """The tensor of the failing frame whose dtype its operation refuses, as the
    tensors show it: integers into a torch layer that computes with floating weights
    (uint8 pixels into a Conv2d); integers or booleans shaped exactly like a float
    tensor beside them (targets of values, not class indices); whole numbers beyond 0
    and 1 stored as floats, where they are indices (ids, class indices, gather's);
    uint8, which masks and float layers refuse. None when no tensor shows one."""
    tensors = _inputs(frame)
    floats = {n: t for n, t in tensors.items() if t.is_floating_point()}
    for name, value in tensors.items():
        if _integral(value) and _float_layer(frame.module):
            return name
        if _integral(value) and value.dim() >= 1 and _shaped_like(value, floats):
            return name
        if value.dtype == torch.uint8 and value.dim() >= 1:
            return name
        if _float_indices(value, floats):
            return name
    return None


def _float_layer(module: torch.nn.Module | None) -> bool:
    """A torch layer that multiplies its input by floating weights."""
    if module is None or isinstance(
        module, (torch.nn.Embedding, torch.nn.EmbeddingBag)
    ):
        return False
    if not type(module).__module__.startswith("torch.nn.modules"):
        return False
    return any(p.is_floating_point() for p in module.parameters(recurse=False))


def _shaped_like(value: torch.Tensor, floats: dict[str, torch.Tensor]) -> bool:
    return any(
        other.shape == value.shape and not name.endswith("weight")
        for name, other in floats.items()
    )


def _float_indices(value: torch.Tensor, floats: dict[str, torch.Tensor]) -> bool:
    """Whole numbers beyond 0 and 1 in a float tensor of at most two dimensions (ids
    per position, indices per sample: images and signals have more), not shaped like
    a float tensor of fractions beside it (the target of a regression)."""
    if not value.is_floating_point() or not 1 <= value.dim() <= 2:
        return False
    if not _whole(value) or bool(((value == 0) | (value == 1)).all()):
        return False
    return not any(
        other is not value and other.shape == value.shape and not _whole(other)
        for other in floats.values()
    )


# --- shapes ---------------------------------------------------------------------------


def disagreeing_shape(frame: Frame, output: Output) -> str | None:
    """A target the failing frame holds, beside the output (a float tensor as wide as
    the output's classes), in neither of the shapes a loss takes: the output's own
    (values, probabilities) or the output's without its class dimension (indices).
    A layer given an input of another size than its own is the same evidence, and so
    is a one-hot tensor: class indices written out in the output's shape, which an
    index loss refuses (whether the loss wanted indices or floats, its dtype says)."""
    mismatched = _layer_input_mismatch(frame)
    if mismatched is not None:
        return mismatched
    for name, value in _inputs(frame).items():
        if one_hot(value) or one_hot(value, 1):
            return name
    if output.width is None or output.width < 2:
        return None
    tensors = _inputs(frame)
    outputs = [
        t for t in tensors.values()
        if t.is_floating_point() and t.dim() >= 2 and t.shape[-1] == output.width
    ]  # fmt: skip
    for name, value in tensors.items():
        for logits in outputs:
            if value is logits or value.dim() == 0:
                continue
            shape = tuple(logits.shape)
            taken = (shape, shape[:-1], shape[:1] + shape[2:])
            if value.shape[0] != shape[0] or tuple(value.shape) in taken:
                continue
            if _integral(value) or _whole(value):  # a target: indices or labels
                return name
    return None


def _layer_input_mismatch(frame: Frame) -> str | None:
    """A torch layer's ``input`` whose size disagrees with the layer's own: features
    against a Linear's in_features, channels against a convolution's in_channels,
    against an RNN's input_size or a LayerNorm's normalized_shape."""
    module, value = frame.module, frame.tensors.get("input")
    if module is None or value is None or value.dim() == 0:
        return None
    shape = tuple(value.shape)
    expected: list[bool] = []
    if isinstance(module, torch.nn.Linear):
        expected.append(shape[-1] == module.in_features)
    elif isinstance(module, torch.nn.modules.conv._ConvNd):
        spatial = len(module.kernel_size)
        expected.append(
            len(shape) > spatial and shape[-spatial - 1] == module.in_channels
        )
    elif isinstance(module, torch.nn.RNNBase):
        expected.append(shape[-1] == module.input_size)
    elif isinstance(module, torch.nn.LayerNorm):
        normalized = tuple(module.normalized_shape)
        expected.append(shape[len(shape) - len(normalized) :] == normalized)
    return "input" if expected and not all(expected) else None


def one_hot(value: torch.Tensor, dim: int = -1) -> bool:
    """Zeros with a single one along ``dim``: the last (one row per sample), or 1
    (a class map of one channel per class, (B, C, H, W))."""
    if value.dim() < 2 or value.shape[dim] < 2 or value.numel() == 0:
        return False
    if dim == 1 and value.dim() < 3:
        return False
    if value.dtype == torch.bool or value.is_complex():
        return False
    if not bool(((value == 0) | (value == 1)).all()):
        return False
    return bool((value.sum(dim) == 1).all())


# --- helpers ---


def _inputs(frame: Frame) -> dict[str, torch.Tensor]:
    """The frame's tensors but its parameters: what the operation was given."""
    return {
        name: value
        for name, value in frame.tensors.items()
        if not isinstance(value, torch.nn.Parameter)
    }


def _integral(value: torch.Tensor) -> bool:
    """Integers or booleans: what a floating operation refuses."""
    return not value.is_floating_point() and not value.is_complex()


def _whole(value: torch.Tensor) -> bool:
    if not value.is_floating_point() or value.numel() == 0:
        return False
    detached = value.detach()
    return bool(torch.isfinite(detached).all()) and bool(
        (detached == detached.round()).all()
    )
