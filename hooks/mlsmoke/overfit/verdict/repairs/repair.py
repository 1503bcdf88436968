"""What a repair is, and what the proposers know when they propose one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import torch

# The diagnosis code a repair names when it makes the step run (the table).
DATA_ERROR = "data-error"
LABEL_RANGE_ERROR = "label-range-error"
SHAPE_ERROR = "shape-error"


@dataclass(frozen=True)
class Context:
    """What the proposers read besides the field itself.

    ``output_shape`` is the shape of the model's per-sample output (its logits) when a
    forward pass showed it, and ``width`` its last dimension (the classes a target may
    name).
    """

    width: int | None
    output_shape: tuple[int, ...] | None = None

    def indexes_output(self, value: torch.Tensor) -> bool:
        """``value`` is shaped like the output without its class dimension: one class
        index per output row, as a target of the output is."""
        if self.output_shape is None or len(self.output_shape) < 2:
            return False
        return tuple(value.shape) == self.output_shape[:-1]


@dataclass(frozen=True)
class Repair:
    """One change to one field of a copy of the batch.

    ``written`` is the change as the user's code would apply it (``batch[1] - 1``);
    ``meaning`` is empty for a repair that fixes the data's form, and otherwise says
    why running is not proof (a shift that may train on the wrong classes), with the
    values that support it: such a repair is a hypothesis, never a fix.
    ``advice`` are words of the generic suggestions this repair stands for: when it
    was tried and failed, those suggestions are not given.
    """

    field: str
    code: str
    written: str
    change: Callable[[torch.Tensor], torch.Tensor]
    advice: tuple[str, ...] = ()
    meaning: str = ""
    topic: str = "cast"  # the kind of evidence that points at it: see signs.py
    becomes: str = ""  # what the field becomes, in a user's words (a cast's dtype)
    # the same change to other fields, made with this one (together.py)
    together: tuple[Repair, ...] = ()

    @property
    def fields(self) -> list[str]:
        return [self.field, *(other.field for other in self.together)]

    @property
    def is_hypothesis(self) -> bool:
        return bool(self.meaning)


class Proposer(Protocol):
    def __call__(
        self, name: str, value: torch.Tensor, context: Context
    ) -> Iterator[Repair]: ...


def spelled(name: str) -> str:
    """A batch field as the user's code names it: ``batch["labels"]``, ``batch[1]``."""
    if name == "batch" or name.startswith("batch["):
        return name
    return f"batch[{name!r}]".replace("'", '"')


def integral(value: torch.Tensor) -> bool:
    return not value.is_floating_point() and not value.is_complex()


def whole_numbers(value: torch.Tensor) -> bool:
    """A float tensor of finite whole numbers only (class ids stored as floats)."""
    if not value.is_floating_point() or value.numel() == 0:
        return False
    finite = torch.isfinite(value).all()
    return bool(finite) and bool((value == value.round()).all())
