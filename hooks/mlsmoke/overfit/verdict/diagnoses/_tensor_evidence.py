"""What a failed step's tensors show, read from their values, dtypes and shapes rather
than from the error's words: class indices outside the range the model's output
implies, values outside a distribution's support, a dtype the failing operation
refuses, a shape that disagrees with the output's or with a layer's. Pure functions of
tensors, of the model's output and of the frames an error was raised through (their
locals: what the failing operation was given)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from mlsmoke.overfit.verdict.diagnoses._field_values import is_integer_tensor

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
        if isinstance(value, torch.Tensor) and _readable(value)
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
    if not is_integer_tensor(value):
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


# Whether a tensor (by its name, its values and the classes it would index) is a class
# target: it reaches the loss or the output's last dimension (``target_reach``). The
# default takes every tensor shaped as class indices for one (no trace at hand).
ClassTarget = Callable[[str, torch.Tensor, int], bool]


def shaped_as_classes(name: str, value: torch.Tensor, classes: int) -> bool:
    return True


def outside_classes(
    name: str,
    value: torch.Tensor,
    output: Output,
    is_class_target: ClassTarget = shaped_as_classes,
) -> Outside | None:
    """``value``'s class indices that name no class of the output (below 0, the
    ignore index aside, or at or past its width), when its shape agrees with it and
    ``is_class_target`` says it is a class target."""
    classes = classes_indexed(value, output)
    if classes is None or value.numel() == 0:
        return None
    flat = value.detach().reshape(-1)
    bad = flat[((flat < 0) & (flat != IGNORE_INDEX)) | (flat >= classes)]
    if bad.numel() == 0 or not is_class_target(name, value, classes):
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
    fields: Iterable[tuple[str, Any]],
    chains: list[list[Frame]],
    output: Output,
    is_class_target: ClassTarget = shaped_as_classes,
) -> Outside | None:
    """Values outside what the step allows, with shapes that agree: a distribution's
    value outside its support; else a class index that the failing operation was
    given (not an id into a lookup table: an input, not a target) or that a batch
    field holds, beyond the output's classes, when ``is_class_target`` says it is
    one. ``chains``: the frames of each error of the chain, innermost first."""
    for frames in chains:
        found = outside_support(frames)
        if found is not None:
            return found
    for frames in chains:
        raised = raised_frame(frames)
        if raised is None or _looks_up(raised):
            continue
        for name, value in raised.tensors.items():
            found = outside_classes(name, value, output, is_class_target)
            if found is not None:
                return found
    for name, value in fields:
        if isinstance(value, torch.Tensor):
            found = outside_classes(name, value, output, is_class_target)
            if found is not None:
                return found
    for frames in chains:
        raised = raised_frame(frames)
        if raised is not None and output.shape is None and raised.module is not None:
            for name, value in raised.tensors.items():
                found = past_the_head(name, value, output, raised.module)
                if found is not None:
                    return found
    return None


def past_the_head(
    name: str, value: torch.Tensor, output: Output, model: torch.nn.Module
) -> Outside | None:
    """Sequences of class indices (B, L) that a model's own check refused before
    its head ran (a CTC model's labels): integers past the head's outputs that are
    no ids of the model's lookup tables (those are inputs: token ids)."""
    width = output.width
    if width is None or width < 2 or not is_integer_tensor(value) or value.dim() != 2:
        return None
    flat = value.detach().reshape(-1)
    bad = flat[((flat < 0) & (flat != IGNORE_INDEX)) | (flat >= width)]
    if bad.numel() == 0:
        return None
    lookups = (torch.nn.Embedding, torch.nn.EmbeddingBag)
    tables = [m.num_embeddings for m in model.modules() if isinstance(m, lookups)]
    if any(int(flat.max()) < rows for rows in tables):
        return None
    return Outside(name, _few(bad), f"classes 0..{width - 1}", tensor=value)


def _looks_up(frame: Frame) -> bool:
    """The frame indexes a table of weights (an embedding): its integers are ids."""
    if isinstance(frame.module, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
        return True
    return any(isinstance(t, torch.nn.Parameter) for t in frame.tensors.values())


# --- helpers --------------------------------------------------------------------------


def _readable(value: torch.Tensor) -> bool:
    """A tensor whose values can be read (not on the meta device, not sparse or
    quantized)."""
    return (
        value.device.type != "meta"
        and value.layout == torch.strided
        and not value.is_quantized
    )


def _few(values: torch.Tensor) -> tuple[float, ...]:
    unique = values.detach().reshape(-1).unique()[:_SHOWN]
    return tuple(float(v) for v in unique)
