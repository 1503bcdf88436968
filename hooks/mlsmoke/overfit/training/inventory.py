"""The batch's inventory: each field, what it holds, and whether a model can take it.

Recorded by the engine as it builds the batch, so that the diagnoses read what the
batch held rather than the wording of whatever error followed. A field that is not a
tensor (a str, a list, a ragged list, None, an array) means the data pipeline never
tensorized it; a float tensor with NaN or Inf poisons every loss.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import torch

from mlsmoke.overfit.training import batch_objects
from mlsmoke.overfit.training.evidence import BatchField


def batch_fields(batch: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` per field: tuple positions, mapping keys, a graph's or a
    dataclass's or an object's attributes (batch_objects.fields), else ``batch``."""
    if isinstance(batch, (tuple, list)):
        return [(f"batch[{i}]", v) for i, v in enumerate(batch)]
    return batch_objects.fields(batch) or [("batch", batch)]


def describe_value(value: Any) -> str:
    """What a batch field holds, for a user reading a diagnosis."""
    if isinstance(value, torch.Tensor):
        text = f"{str(value.dtype).replace('torch.', '')} tensor {tuple(value.shape)}"
        if value.numel() and not value.is_floating_point() and not value.is_complex():
            if value.dtype != torch.bool:
                text += f", values {int(value.min())}..{int(value.max())}"
        return text
    if isinstance(value, str):
        return f"a str ({value[:20]!r})"
    if isinstance(value, (list, tuple)):
        inner = describe_value(value[0]).split(" (")[0] if value else "nothing"
        text = f"a {type(value).__name__} of {len(value)} ({inner}, ...)"
        lengths = _lengths(value)
        if lengths and min(lengths) != max(lengths):
            text += f", ragged: lengths {min(lengths)}..{max(lengths)}"
        return text
    if value is None:
        return "None"
    return f"a {type(value).__name__}"


def field_problem(value: Any) -> str | None:
    """Why ``value`` is no tensor a model takes, or None when it is (a tensor, or a
    container whose leaves are all tensors)."""
    if isinstance(value, torch.Tensor):
        return None
    if value is None:
        return "None"
    if isinstance(value, (str, bytes)):
        return f"a {type(value).__name__}"
    if batch_objects.moves_itself(value) and batch_objects.tensors_in(value):
        return None  # a graph, a TensorDict, a project's batch class: models take it
    if isinstance(value, Mapping):
        inner = [field_problem(item) for item in value.values()]
        return _nested(type(value).__name__, inner)
    if isinstance(value, (list, tuple)):
        lengths = _lengths(value)
        if lengths and min(lengths) != max(lengths):
            kind = type(value).__name__
            return f"a ragged {kind} (lengths {min(lengths)}..{max(lengths)})"
        if value and all(isinstance(item, torch.Tensor) for item in value):
            return None
        return f"a {type(value).__name__} of {_kinds(value)}, not a tensor"
    return f"a {type(value).__name__}, not a tensor"


def _nested(kind: str, inner: list[str | None]) -> str | None:
    found = [problem for problem in inner if problem is not None]
    return f"a {kind} holding {found[0]}" if found else None


def _kinds(items: list | tuple) -> str:
    names = sorted({type(item).__name__ for item in items})
    return ", ".join(names) or "nothing"


def _lengths(items: list | tuple) -> list[int]:
    """Each item's length (first dimension for tensors) when every item has one."""
    lengths = []
    for item in items:
        if isinstance(item, torch.Tensor):
            if item.dim() == 0:
                return []
            lengths.append(int(item.shape[0]))
        elif isinstance(item, (list, tuple)):
            lengths.append(len(item))
        else:
            return []
    return lengths


def nonfinite_count(value: Any) -> int:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return int((~torch.isfinite(value)).sum())
    return 0


def inventory(batch: Any) -> list[BatchField]:
    """Every field of ``batch``, as plain values."""
    return [
        BatchField(
            name, describe_value(value), field_problem(value), nonfinite_count(value)
        )
        for name, value in batch_fields(batch)
    ]


def safe_inventory(batch: Any) -> list[BatchField]:
    """:func:`inventory`, or nothing when reading the batch raises (an instrument's
    failure must never pass for the project's error)."""
    try:
        return inventory(batch)
    except Exception:
        return []


def forward_parameters(model: torch.nn.Module) -> list[str] | None:
    """The names ``model.forward`` takes by keyword (``**kwargs`` excluded); None when
    its signature cannot be read."""
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return None
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in signature.parameters.values() if p.kind in keyword]
