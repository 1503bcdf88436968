"""What a failed step's tensors show, read from their values, dtypes and shapes rather
than from the error's words: class indices outside the range the model's output
implies, values outside a distribution's support, a dtype the failing operation
refuses, a shape that disagrees with the output's or with a layer's. Pure functions of
tensors, of the model's output and of the frames an error was raised through (their
locals: what the failing operation was given)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

IGNORE_INDEX = -100  # torch's losses' default ignore_index: no class, skipped
_SHOWN = 4  # values quoted in an evidence line


@dataclass(frozen=True)
class Output:
    """The model's output as a target sees it: ``shape``, the shape of its logits when
    a forward showed them, and ``width``, the classes a target may name (their last
    dimension, else the outputs of the model's last layer)."""

    width: int | None
    shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Frame:
    """One frame an error was raised through: its tensor locals by name, the module
    it ran (its ``self``) and the distribution it belongs to."""

    tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    module: torch.nn.Module | None = None
    distribution: Any = None  # a torch.distributions.Distribution


@dataclass(frozen=True)
class Outside:
    """Values of the tensor ``name`` outside what they may be: ``allowed`` in a
    reader's words (``classes 0..3``, ``the support IntegerInterval(...)``)."""

    name: str
    values: tuple[float, ...]
    allowed: str
    support: bool = False  # a distribution's support, not the output's classes
    tensor: torch.Tensor | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        shown = ", ".join(f"{v:g}" for v in self.values)
        return f"{self.name} holds {shown}, outside {self.allowed}"


def frame_of(local_values: Mapping[str, Any]) -> Frame:
    """The tensors, module and distribution of one frame's locals."""
    tensors = {
        name: value
        for name, value in local_values.items()
        if isinstance(value, torch.Tensor) and not value.is_sparse
    }
    owner = local_values.get("self")
    module = owner if isinstance(owner, torch.nn.Module) else None
    distribution = (
        owner if isinstance(owner, torch.distributions.Distribution) else None
    )
    return Frame(tensors, module, distribution)


def raised_frame(frames: Iterable[Frame]) -> Frame | None:
    """The innermost frame that held a tensor: the operation that failed, with what
    it was given (``frames`` innermost first)."""
    return next((frame for frame in frames if frame.tensors), None)


# --- values ---------------------------------------------------------------------------


def classes_indexed(value: torch.Tensor, output: Output) -> int | None:
    """How many classes ``value`` names when it is shaped as class indices of the
    output (the output without its class dimension, last or second as in (B, C, H,
    W), or those positions flattened); None when its shape does not agree, or the
    output names no classes (a width below 2 is a regression or one binary logit).
    Without the output's shape, one index per sample (1-D) against the width."""
    if not _integers(value):
        return None
    if output.shape is None:
        width = output.width
        return width if width is not None and width >= 2 and value.dim() <= 1 else None
    for positions, classes in _index_readings(output.shape):
        flattened = value.dim() == 1 and value.numel() == math.prod(positions)
        if classes >= 2 and (tuple(value.shape) == positions or flattened):
            return classes
    return None


def _index_readings(shape: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
    if len(shape) < 2:
        return []
    readings = [(shape[:-1], shape[-1])]
    if len(shape) >= 3:
        readings.append((shape[:1] + shape[2:], shape[1]))
    return readings


def outside_classes(name: str, value: torch.Tensor, output: Output) -> Outside | None:
    """``value``'s class indices that name no class of the output (below 0, the
    ignore index aside, or at or past its width), when its shape agrees with it."""
    classes = classes_indexed(value, output)
    if classes is None or value.numel() == 0:
        return None
    flat = value.detach().reshape(-1)
    bad = flat[((flat < 0) & (flat != IGNORE_INDEX)) | (flat >= classes)]
    if bad.numel() == 0:
        return None
    return Outside(name, _few(bad), f"classes 0..{classes - 1}", tensor=value)


def outside_support(frames: Iterable[Frame]) -> Outside | None:
    """A distribution's ``value`` outside its support, in the frame of the
    distribution's own method (log_prob, its argument check)."""
    for frame in frames:
        value = frame.tensors.get("value")
        if frame.distribution is not None and value is not None:
            found = _outside_support_of(frame.distribution, "value", value)
            if found is not None:
                return found
    return None


def _outside_support_of(
    distribution: Any, name: str, value: torch.Tensor
) -> Outside | None:
    try:
        support = distribution.support
        valid = support.check(value)
    except Exception:  # a support that depends on the parameters, or cannot check
        return None
    if not isinstance(valid, torch.Tensor) or valid.numel() == 0 or bool(valid.all()):
        return None
    bad = value[~valid] if valid.shape == value.shape else value.reshape(-1)[:0]
    return Outside(
        name, _few(bad), f"the support {support}", support=True, tensor=value
    )


def outside_values(
    fields: Iterable[tuple[str, Any]], chains: list[list[Frame]], output: Output
) -> Outside | None:
    """Values outside what the step allows, with shapes that agree: a distribution's
    value outside its support; else a class index that the failing operation was
    given (not an id into a lookup table: an input, not a target) or that a batch
    field holds, beyond the output's classes. ``chains``: the frames of each error
    of the chain, innermost first."""
    for frames in chains:
        found = outside_support(frames)
        if found is not None:
            return found
    for frames in chains:
        raised = raised_frame(frames)
        if raised is None or _looks_up(raised):
            continue
        for name, value in raised.tensors.items():
            found = outside_classes(name, value, output)
            if found is not None:
                return found
    for name, value in fields:
        if isinstance(value, torch.Tensor):
            found = outside_classes(name, value, output)
            if found is not None:
                return found
    return None


def _looks_up(frame: Frame) -> bool:
    """The frame indexes a table of weights (an embedding): its integers are ids."""
    if isinstance(frame.module, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
        return True
    return any(isinstance(t, torch.nn.Parameter) for t in frame.tensors.values())


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
        if one_hot(value):
            return name
    if output.width is None or output.width < 2:
        return None
    tensors = _inputs(frame)
    outputs = [
        t for t in tensors.values()
        if t.is_floating_point() and t.dim() >= 2 and t.shape[-1] == output.width
    ]  # fmt: skip
    for name, value in tensors.items():
        if value.dim() == 0 or not (_integral(value) or _whole(value)):
            continue
        for logits in outputs:
            if value is logits or value.shape[0] != logits.shape[0]:
                continue
            shape = tuple(logits.shape)
            if tuple(value.shape) not in (shape, shape[:-1], shape[:1] + shape[2:]):
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


def one_hot(value: torch.Tensor) -> bool:
    """Rows of zeros with a single one along the last dimension."""
    if value.dim() < 2 or value.shape[-1] < 2 or value.numel() == 0:
        return False
    if value.dtype == torch.bool or value.is_complex():
        return False
    if not bool(((value == 0) | (value == 1)).all()):
        return False
    return bool((value.sum(-1) == 1).all())


# --- helpers --------------------------------------------------------------------------


def _inputs(frame: Frame) -> dict[str, torch.Tensor]:
    """The frame's tensors but its parameters: what the operation was given."""
    return {
        name: value
        for name, value in frame.tensors.items()
        if not isinstance(value, torch.nn.Parameter)
    }


def _integers(value: Any) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and not value.is_floating_point()
        and not value.is_complex()
        and value.dtype != torch.bool
    )


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


def _few(values: torch.Tensor) -> tuple[float, ...]:
    unique = values.detach().reshape(-1).unique()[:_SHOWN]
    return tuple(float(v) for v in unique)
