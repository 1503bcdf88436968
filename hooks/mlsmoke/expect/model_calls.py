"""The calls in one forward where a batch's integer or label field meets the model's
width (torch side): a classification loss (its target, and the class dimension of
its input) and an embedding lookup (its ids, and the table's rows).

They are seen through a ``TorchFunctionMode``, so a loss or an embedding is found
whether the project calls ``F.cross_entropy`` or ``nn.CrossEntropyLoss``, inside the
model's forward (nanoGPT's ``(logits, loss)``) or in a loss callable. Each call is kept
before it runs: a target past the width makes the loss raise, and that call is the
evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

# Losses whose target is class ids (integer) or per-class values (float), by the
# index of their class dimension in the input (dim 1, or 0 for an unbatched input).
CLASS_ID_LOSSES: dict[Callable[..., Any], str] = {
    F.cross_entropy: "cross_entropy",
    F.nll_loss: "nll_loss",
}
# Losses whose target has the input's shape: one value per class in the last dim.
PER_CLASS_LOSSES: dict[Callable[..., Any], str] = {
    F.binary_cross_entropy_with_logits: "binary_cross_entropy_with_logits",
    F.binary_cross_entropy: "binary_cross_entropy",
}


@dataclass
class Meeting:
    """A tensor that reached a call bounded by a model width."""

    tensor: torch.Tensor
    role: str  # "class ids", "per-class target" or "token ids"
    width: int  # the model's outputs, or the embedding's rows
    call: str  # the function, for the reviewer: "F.cross_entropy"


class WidthCalls(TorchFunctionMode):
    """Records every Meeting of one forward in ``meetings``."""

    def __init__(self) -> None:
        super().__init__()
        self.meetings: list[Meeting] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            found = meeting(func, args, kwargs)
        except Exception:  # an unusual call signature is no evidence, never an error
            found = None
        if found is not None:
            self.meetings.append(found)
        return func(*args, **kwargs)


def meeting(func: Any, args: tuple, kwargs: dict[str, Any]) -> Meeting | None:
    if func is F.embedding:
        ids, weight = _argument(args, kwargs, 0, "input"), _argument(
            args, kwargs, 1, "weight"
        )
        return Meeting(ids, "token ids", int(weight.shape[0]), "F.embedding")
    name = CLASS_ID_LOSSES.get(func) or PER_CLASS_LOSSES.get(func)
    if name is None:
        return None
    logits, target = _argument(args, kwargs, 0, "input"), _argument(
        args, kwargs, 1, "target"
    )
    if not isinstance(logits, torch.Tensor) or not isinstance(target, torch.Tensor):
        return None
    if func in CLASS_ID_LOSSES and not target.is_floating_point():
        width = logits.shape[1] if logits.dim() >= 2 else logits.shape[0]
        return Meeting(target, "class ids", int(width), f"F.{name}")
    # A per-class target: only where the last dimension is the class dimension. Its
    # width may differ from the input's (the bug a check looks for); its rows may not.
    if logits.dim() == 2 and target.dim() == 2 and target.shape[0] == logits.shape[0]:
        return Meeting(target, "per-class target", int(logits.shape[1]), f"F.{name}")
    return None


def _argument(args: tuple, kwargs: dict[str, Any], index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs[name]
