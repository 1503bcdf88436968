"""How big the step is: the model's parameters, and a batch's samples and tokens."""

from __future__ import annotations

import inspect
from pathlib import Path

import torch

from mlsmoke.profile.figures import Model


def parameter_count(model: torch.nn.Module) -> int:
    """Elements of ``model``'s parameters, a tied weight counted once."""
    return sum(parameter.numel() for parameter in model.parameters())


def batch_figures(tensors: list[torch.Tensor]) -> tuple[int | None, int | None]:
    """(samples, tokens) of a batch from its first tensor: the first dimension, and
    its elements when it holds integers (token ids); None where it cannot say."""
    if not tensors or tensors[0].dim() == 0:
        return None, None
    first = tensors[0]
    integers = not first.dtype.is_floating_point and not first.dtype.is_complex
    tokens = int(first.numel()) if integers and first.dtype != torch.bool else None
    return int(first.shape[0]), tokens


def model_figure(model: torch.nn.Module | None, root: Path) -> Model | None:
    """The model's class, size, and where the project defines it."""
    if model is None:
        return None
    return Model(type(model).__name__, parameter_count(model),
                 defined_at(type(model), root))  # fmt: skip


def defined_at(kind: type, root: Path) -> str:
    """``model.py:80``: where a class of the project is defined, relative to its
    root; "" for torch's own (nn.Linear) and other packages'."""
    try:
        _, line = inspect.getsourcelines(kind)
        path = Path(inspect.getsourcefile(kind) or "").resolve()
    except (OSError, TypeError):
        return ""
    inside = path.is_relative_to(root.resolve())
    if not inside or "-packages" in str(path) or ".venv" in path.parts:
        return ""
    return f"{path.relative_to(root.resolve())}:{line}"
