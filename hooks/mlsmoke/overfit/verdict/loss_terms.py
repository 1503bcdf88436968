"""Which term of the loss the targets do not move: the regularizer that
``interventions/no_regularizer.py`` leaves out.

The loss, as the gate computes it, is read by a torch function mode over one call
of a fresh model: its last addition of two scalar tensors must make the loss itself,
and one operand must keep its value when the targets are paired with other samples
while the other changes. That one is the data's term, the first the regularizer.

The targets are, for a loss callable, the batch fields the model's forward is not
given. A loss computed inside the model (``model(ids, labels)`` returning the loss,
or ``(logits, loss)``) is given every field; there each field is paired anew on its
own (all at once, a penalty that is a batch mean and the data's term both keep
their value), and the targets are those that move the data's term alone. A field
that moves the other term alone makes the sum no data term plus a regularizer: none
is found.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from mlsmoke.overfit.verdict import forward_probes, project_frames
from mlsmoke.overfit.verdict.batch_probes import batch_fields, seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember

_ADDITIONS = (torch.add, torch.Tensor.add, torch.sub, torch.Tensor.sub)
_SUBTRACTIONS = (torch.sub, torch.Tensor.sub)


@dataclass(frozen=True)
class ExtraTerm:
    addition: int  # the place of the loss's last addition among the scalar ones
    kept: int  # the operand (0 or 1) that is the data term
    value: float  # the regularizer's value at init
    loss: float  # the whole loss at init
    targets: tuple[str, ...]  # the fields the data term reads and the other does not
    additions: int = 0  # how many scalar additions one call of the loss makes
    where: str | None = None  # the project's line that adds it
    inside_model: bool = False  # the model's forward computes the loss


def find(run: GateRun) -> ExtraTerm | None:
    """The term of the loss that the targets do not move; None when the loss is no
    such sum."""
    return remember(run, "extra-loss-term", lambda: _find(run))


class Sums(TorchFunctionMode):
    """Records each addition or subtraction of two scalar tensors (its operands,
    result, and whether it subtracts), in order; at ``keep`` = (place, operand)
    that addition returns the operand alone."""

    def __init__(
        self,
        keep: tuple[int, int] | None = None,
        lines_from: str | None | bool = False,
    ) -> None:
        super().__init__()
        # (left, right, result, whether it subtracts)
        self.sums: list[tuple[Any, Any, Any, bool]] = []
        self.keep = keep
        self.loss: Any = None  # what the loss returned, where the caller keeps it
        # where each addition is made, when asked for: ``lines_from`` is the
        # working directory the paths are shown from (None: absolute), or False
        self.lines: list[str | None] | None = None if lines_from is False else []
        self._directory = None if lines_from is False else lines_from
        self._libraries = (
            project_frames.library_directories() if self.lines is not None else ()
        )

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore
        kwargs = kwargs or {}
        if func not in _ADDITIONS or not _two_scalars(args) or kwargs:
            return func(*args, **kwargs)
        place = len(self.sums)
        if self.keep is not None and self.keep[0] == place:
            result = args[self.keep[1]]
        else:
            result = func(*args, **kwargs)
        self.sums.append((args[0], args[1], result, func in _SUBTRACTIONS))
        if self.lines is not None:
            self.lines.append(self._line())
        return result

    def _line(self) -> str | None:
        frames = traceback.extract_stack()
        frame = project_frames.innermost_project_frame(frames, self._libraries)
        if frame is None:
            return None
        return project_frames.frame_line(frame, self._directory)


def _two_scalars(args: tuple) -> bool:
    return (
        len(args) == 2
        and all(isinstance(a, torch.Tensor) and a.dim() == 0 for a in args)
        and all(a.is_floating_point() for a in args)
    )


def _find(run: GateRun) -> ExtraTerm | None:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
        first = _sums(run, model, batch, run.evidence.working_directory)
        if run.loss_fn is not None:
            targets = _not_given(run, model, batch)
            paired = [value for _, value in targets]
            second = _sums(run, model, _rolled(batch, paired)) if targets else None
        else:
            targets, second = _moving_one_term(run, model, batch, first)
        if second is None:
            return None
    except Exception:
        return None
    term = _extra_term(first.sums, second.sums, first.loss)
    if term is None:
        return None
    return replace(
        term,
        targets=tuple(name for name, _ in targets),
        additions=len(first.sums),
        where=first.lines[term.addition] if first.lines else None,
        inside_model=run.loss_fn is None,
    )


def _sums(
    run: GateRun,
    model: torch.nn.Module,
    batch: Any,
    lines_from: str | None | bool = False,
) -> Sums:
    sums = Sums(lines_from=lines_from)
    with seeded(run), torch.no_grad(), sums:
        sums.loss = forward_probes.loss_of(run, model, batch)
    return sums


def _extra_term(first: list, second: list, loss: Any) -> ExtraTerm | None:
    """The loss's last addition, when one operand keeps its value and the other
    changes between ``first`` and ``second`` (the targets paired anew)."""
    if not first or len(first) != len(second) or first[-1][2] is not loss:
        return None
    place = len(first) - 1
    kept = _moved_operand(first[place], second[place])
    if kept is None:
        return None
    if kept == 1 and first[place][3]:
        return None  # a - b without a is -b: no weight 0 leaves the data term
    extra = float(first[place][1 - kept])
    return ExtraTerm(place, kept, extra, float(loss), ())


def _moved_operand(before: tuple, after: tuple) -> int | None:
    """The one operand of an addition that changed, when the other kept a value
    other than 0; else None."""
    was = [float(t) for t in before[:2]]
    now = [float(t) for t in after[:2]]
    moved = [abs(a - b) > 1e-6 * max(1.0, abs(a)) for a, b in zip(was, now)]
    if moved.count(True) != 1 or was[moved.index(False)] == 0:
        return None
    return moved.index(True)


def _not_given(
    run: GateRun, model: torch.nn.Module, batch: Any
) -> list[tuple[str, torch.Tensor]]:
    """The batch fields (tensors) that the model's forward is not given."""
    given: list[Any] = []

    def record(module: Any, args: tuple, kwargs: dict) -> None:
        given.extend([*args, *kwargs.values()])

    handle = model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        with seeded(run), torch.no_grad():
            forward_probes.loss_of(run, model, batch)
    finally:
        handle.remove()
    return [
        (name, value)
        for name, value in _pairable(batch)
        if not any(value is g for g in given)
    ]


def _moving_one_term(
    run: GateRun, model: torch.nn.Module, batch: Any, first: Sums
) -> tuple[list[tuple[str, torch.Tensor]], Sums | None]:
    """The fields that, paired anew each on its own, move one operand of the loss's
    last addition and keep the other, all the same one, with the sums of the first
    such pairing; none when a field moves the other operand alone. Each on its own:
    a penalty that is a mean over the batch keeps its value when every field is
    paired anew together, and so does the data's term."""
    if not first.sums or first.sums[-1][2] is not first.loss:
        return [], None
    place = len(first.sums) - 1
    found: list[tuple[str, torch.Tensor]] = []
    operands: set[int] = set()
    second: Sums | None = None
    for name, value in _pairable(batch):
        again = _sums(run, model, _rolled(batch, [value]))
        if len(again.sums) != len(first.sums):
            return [], None
        moved = _moved_operand(first.sums[place], again.sums[place])
        if moved is not None:
            found.append((name, value))
            operands.add(moved)
            second = second or again
    return (found, second) if len(operands) == 1 else ([], None)


def _pairable(batch: Any) -> list[tuple[str, torch.Tensor]]:
    """The tensor fields that pairing with other samples changes."""
    return [
        (name, value)
        for name, value in batch_fields(batch)
        if isinstance(value, torch.Tensor)
        and value.dim() >= 1
        and value.shape[0] > 1
        and not torch.equal(value, value.roll(1, 0))
    ]


def _rolled(batch: Any, targets: list[torch.Tensor]) -> Any:
    """The batch with each target field paired with the next sample's inputs."""

    def roll(value: Any) -> Any:
        return value.roll(1, 0) if any(value is t for t in targets) else value

    if isinstance(batch, dict):
        return {key: roll(value) for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(roll(value) for value in batch)
    raise TypeError("a batch of another kind: its targets are left as they are")
