"""Which batch fields are class targets, shown by where their values go in one step
of a fresh model, not by their names or their values: a field is a class target when
it (or an integer tensor computed from it) is the target of a classification loss,
indexes a dimension as wide as the model's output, or is compared with that width (a
project's own check of its labels, in torch, or in Python numbers in the ``if``
or ``assert`` that raised: ``raising_check.py``). An integer field that only indexes
a schedule or a table of its own width (diffusion timesteps, positions), or is
checked against one, is not one, whatever values it holds.

The step is traced through a ``TorchFunctionMode`` up to where it raises: what a
failing step did before its error is the evidence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from mlsmoke.expect.model_calls import CLASS_ID_LOSSES, PER_CLASS_LOSSES
from mlsmoke.overfit.training.inventory import batch_fields
from mlsmoke.overfit.verdict import forward_probes, raising_check
from mlsmoke.overfit.verdict.batch_probes import same_tensor, seeded
from mlsmoke.overfit.verdict.diagnoses._field_values import is_integer_tensor
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember

_COMPARISONS = {"__ge__", "__gt__", "__lt__", "__le__", "ge", "gt", "lt", "le"}
_COMPARISONS |= {"greater", "greater_equal", "less", "less_equal"}
_GATHERS = {"gather", "take_along_dim"}


@dataclass(frozen=True)
class Use:
    """A tensor computed from batch ``fields`` that met a width: the target of a loss
    (``width`` None: any output), a comparison with a number, or an index along a
    dimension of that size."""

    fields: frozenset[str]
    tensor: torch.Tensor = field(compare=False, repr=False)
    width: int | None
    how: str  # "loss target", "compared with", "indexes a dimension of"


@dataclass
class Reach:
    """The uses of one traced step; empty when the trace could not run."""

    uses: list[Use] = field(default_factory=list)

    def meets(self, width: int | None) -> list[Use]:
        """The uses that make a class target of an output ``width`` wide."""
        return [
            use
            for use in self.uses
            if use.width is None
            or (width is not None and use.width in (width, width - 1))
        ]

    def is_class_target(
        self, name: str, value: torch.Tensor, width: int | None
    ) -> bool:
        """Whether the field ``name``, or a tensor holding ``value``'s values (a
        frame's local: a field reshaped, a loss's ``target``), reaches the loss or
        the output's last dimension."""
        for use in self.meets(width):
            if name in use.fields or _same_values(value, use.tensor):
                return True
        return False


def class_target_reach(run: GateRun) -> Reach:
    """The uses of the batch's fields in one step of a fresh model (memoized)."""
    return remember(run, "class-target-reach", lambda: _trace(run))


def _trace(run: GateRun) -> Reach:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
    except Exception:
        return Reach()
    tracer = _Uses(batch_fields(batch))
    model.eval()
    try:
        with seeded(run), torch.no_grad(), tracer:
            forward_probes.loss_of(run, model, batch)
    except Exception as error:  # the uses before the error are the evidence
        return Reach(tracer.uses + _checked(error, tracer))
    return Reach(tracer.uses)


def _checked(error: Exception, tracer: _Uses) -> list[Use]:
    """The project's own check that raised ``error``, comparing a field's values
    with a number in Python (``int(y.max()) >= n``), which no torch call shows."""
    try:
        compared = raising_check.comparisons(error)
    except Exception:
        return []
    uses = []
    for tensor, number in compared:
        fields = tracer.fields_of(tensor)
        if fields and float(number).is_integer():
            uses.append(Use(fields, tensor, int(number), "compared with"))
    return uses


class _Uses(TorchFunctionMode):
    """Follows each tensor computed from a batch field, and records its uses."""

    def __init__(self, fields: Iterable[tuple[str, Any]]) -> None:
        super().__init__()
        self.uses: list[Use] = []
        self._kept: list[torch.Tensor] = []  # alive, so that no id is reused
        self._sources: dict[int, frozenset[str]] = {}
        for name, value in fields:  # of any dtype: float labels cast to long
            if isinstance(value, torch.Tensor):
                self._kept.append(value)
                self._sources[id(value)] = frozenset({name})

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore
        kwargs = kwargs or {}
        try:  # before the call: a target past the width makes the loss raise
            sources = self._record(func, args, kwargs)
        except Exception:  # an unusual call is no evidence, never an error
            sources = frozenset()
        output = func(*args, **kwargs)
        if sources:
            for leaf in tree_flatten(output)[0]:
                if isinstance(leaf, torch.Tensor):
                    self._mark(leaf, sources)
        return output

    def _record(self, func: Any, args: tuple, kwargs: dict) -> frozenset[str]:
        """The fields the call's tensors come from, with the call's use of them."""
        leaves, _ = tree_flatten((args, kwargs))
        sources = frozenset().union(*(self._of(leaf) for leaf in leaves))
        if sources:
            use = _use(func, args, kwargs, self._of)
            if use is not None:
                self.uses.append(use)
        return sources

    def fields_of(self, value: Any) -> frozenset[str]:
        """The fields ``value`` was computed from (none: not from the batch)."""
        return self._of(value)

    def _of(self, value: Any) -> frozenset[str]:
        if isinstance(value, torch.Tensor):
            return self._sources.get(id(value), frozenset())
        return frozenset()

    def _mark(self, tensor: torch.Tensor, sources: frozenset[str]) -> None:
        if not is_integer_tensor(tensor):
            return  # class indices are integers: activations are neither kept nor read
        self._kept.append(tensor)
        self._sources[id(tensor)] = self._sources.get(id(tensor), frozenset()) | sources


def _use(func: Any, args: tuple, kwargs: dict, sources_of: Any) -> Use | None:
    if func in CLASS_ID_LOSSES or func in PER_CLASS_LOSSES:
        target = args[1] if len(args) > 1 else kwargs.get("target")
        if sources_of(target):
            return Use(sources_of(target), target, None, "loss target")
        return None
    name = getattr(func, "__name__", "")
    if name in _COMPARISONS and len(args) == 2:
        return _compared(args, sources_of)
    if func is F.one_hot and sources_of(args[0]):
        classes = args[1] if len(args) > 1 else kwargs.get("num_classes", -1)
        return Use(sources_of(args[0]), args[0], int(classes), "compared with")
    if name in _GATHERS:
        return _gathered(args, kwargs, sources_of)
    return None


def _compared(args: tuple, sources_of: Any) -> Use | None:
    for tensor, other in (args, args[::-1]):
        if sources_of(tensor) and not sources_of(other):
            number = _number(other)
            if number is not None:
                return Use(sources_of(tensor), tensor, number, "compared with")
    return None


def _gathered(args: tuple, kwargs: dict, sources_of: Any) -> Use | None:
    values = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    index = args[2] if len(args) > 2 else kwargs.get("index")
    if not sources_of(index) or not isinstance(values, torch.Tensor) or dim is None:
        return None
    width = int(values.shape[dim])
    return Use(sources_of(index), index, width, "indexes a dimension of")


def _number(value: Any) -> int | None:
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_floating_point():
            return None
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else None


def _same_values(value: torch.Tensor, used: torch.Tensor) -> bool:
    """The same values, read flat (a target reshaped on its way to the loss)."""
    if not isinstance(value, torch.Tensor) or value.numel() != used.numel():
        return False
    try:
        return same_tensor(value.detach().cpu().reshape(-1), used.cpu().reshape(-1))
    except Exception:
        return False
