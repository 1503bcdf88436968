"""Try the repairs: each on a copy of the batch, one forward and loss, no step.

The project's batch and model are never changed: each try builds a new batch around
one changed field, and the model (a fresh one from the factory) only runs forward,
without gradients. The unrepaired batch runs first, as the control: a step that runs
as it is in this harness proves nothing about any repair.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from mlsmoke.overfit.training.device import batch_to, placement
from mlsmoke.overfit.verdict import batch_probes, forward_probes, target_reach
from mlsmoke.overfit.verdict.diagnoses import _errors, _step_evidence
from mlsmoke.overfit.verdict.diagnoses._tensor_evidence import Output
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember
from mlsmoke.overfit.verdict.repairs import signs, together
from mlsmoke.overfit.verdict.repairs.repair import Context, Proposer, Repair

MAX_TRIES = 12
BUDGET_SECONDS = 2.0
_FAILED_PHASES = ("forward", "loss")


@dataclass
class Trials:
    """What the repairs did: the one that made the step run (a fix), those that ran
    but may change the data's meaning, and those that did not run."""

    worked: Repair | None = None
    hypotheses: list[Repair] = field(default_factory=list)
    failed: list[Repair] = field(default_factory=list)


def trials(run: GateRun, kinds: list[Proposer]) -> Trials | None:
    """The repairs tried for this run; None when none applies (the step did not fail
    in the forward pass or the loss, or the control already runs)."""
    return remember(run, "repairs", lambda: _try_all(run, kinds))


def step_failed(run: GateRun) -> bool:
    """The step raised in the forward pass or the loss, or its first loss is not
    finite: what a change to the batch could repair."""
    evidence = run.evidence
    if evidence.error is not None:
        return evidence.phase in _FAILED_PHASES and _errors.is_torch_error(evidence)
    return bool(evidence.losses) and not math.isfinite(evidence.losses[0])


def _try_all(run: GateRun, kinds: list[Proposer]) -> Trials | None:
    if not step_failed(run):
        return None
    batch = next(iter(batch_probes.shared_batch(run)), None)
    if batch is None:
        return None
    started, device = time.monotonic(), forward_probes.forward_device(run)
    try:
        with batch_probes.seeded(run):
            model = run.model_factory().to(placement(device))
    except Exception:
        return None
    if _runs(run, _unused(model), batch, device):
        return None  # the control: nothing here to repair
    output = _step_evidence.output_of(run)
    context = Context(output.width, output.shape)
    seen = _signs(run, batch, output)
    found = Trials()
    tried = rank(proposals(batch, context, kinds), seen)
    for repair in _then_together(tried, found):
        if len(found.failed) + len(found.hypotheses) >= MAX_TRIES:
            break
        if time.monotonic() - started > BUDGET_SECONDS:
            break
        repaired = _repaired(batch, repair)
        if repaired is None:
            continue
        if not _runs(run, _unused(model), repaired, device):
            found.failed.append(repair)
        elif repair.is_hypothesis:
            found.hypotheses.append(repair)
        else:
            found.worked = repair
            break
    return found


def _then_together(tried: list[Repair], found: Trials) -> Iterator[Repair]:
    """``tried``, then the same change on several fields at once where each alone
    failed."""
    yield from tried
    if found.worked is None:
        yield from together.together(found.failed)


def _signs(run: GateRun, batch: Any, output: Output) -> signs.Signs:
    try:
        return signs.pointed_at(
            batch_probes.batch_fields(batch),
            _step_evidence.raised_frames(run),
            output,
            target_reach.class_target_reach(run).is_class_target,
        )
    except Exception:  # a tensor the readers cannot take: no evidence, every kind
        return signs.Signs()


def proposals(batch: Any, context: Context, kinds: list[Proposer]) -> list[Repair]:
    """Every repair the proposers offer for the batch's tensor fields, in field order
    and, within a field, in the order of ``kinds``."""
    found = []
    for name, value in batch_probes.batch_fields(batch):
        if not isinstance(value, torch.Tensor):
            continue
        for propose in kinds:
            found += list(propose(name, value, context))
    return found


def rank(repairs: list[Repair], seen: signs.Signs) -> list[Repair]:
    """The repairs of the kinds the evidence points at, in the order of its kinds
    and, within a kind, those of the fields it is about first; every repair, as
    proposed, when it points at no kind."""
    if not seen.kinds:
        return list(repairs)
    kept = [repair for repair in repairs if repair.topic in seen.kinds]
    return sorted(
        kept,
        key=lambda r: (seen.kinds.index(r.topic), r.field not in seen.fields),
    )


def _unused(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of the model no forward has run: a forward may change what the next
    one does (a library head fixes its loss by the first targets' dtype, batch norm
    moves its statistics), and each try must be judged alone."""
    try:
        return copy.deepcopy(model)
    except Exception:  # a model that cannot be copied: tries share it
        return model


def _runs(run: GateRun, model: torch.nn.Module, batch: Any, device: str) -> bool:
    """Forward and loss once on ``batch``, without gradients: a finite scalar comes
    out. The model trains as the gate trains it (train mode)."""
    model.train()
    try:
        with batch_probes.seeded(run), torch.no_grad():
            loss = forward_probes.loss_of(run, model, batch_to(batch, device, None))
    except Exception:
        return False
    if isinstance(loss, torch.Tensor):
        return loss.numel() == 1 and bool(torch.isfinite(loss.detach()).all())
    return isinstance(loss, (int, float)) and math.isfinite(loss)


def _repaired(batch: Any, repair: Repair) -> Any:
    """A copy of ``batch`` with ``repair`` applied to its field; None when the field
    cannot be replaced or the change itself raises."""
    for part in (repair, *repair.together):
        batch = _with_change(batch, part)
        if batch is None:
            return None
    return batch


def _with_change(batch: Any, repair: Repair) -> Any:
    for name, value in batch_probes.batch_fields(batch):
        if name == repair.field and isinstance(value, torch.Tensor):
            try:
                return with_field(batch, name, repair.change(_copied(value)))
            except Exception:
                return None
    return None


def with_field(batch: Any, name: str, value: Any) -> Any:
    """A copy of ``batch`` whose field ``name`` (as ``batch_fields`` names it) is
    ``value``; the other fields are copied too, since a model may change its inputs
    in place."""
    if name == "batch":
        return value
    if isinstance(batch, tuple) and hasattr(batch, "_replace"):
        index = int(name[len("batch[") : -1])
        return batch._replace(**{batch._fields[index]: value})
    if isinstance(batch, (tuple, list)):
        index = int(name[len("batch[") : -1])
        items = [_copied(item) for item in batch]
        items[index] = value
        return type(batch)(items) if isinstance(batch, list) else tuple(items)
    if isinstance(batch, Mapping) or hasattr(batch, "keys"):
        copied = copy.copy(batch)
        key = next(key for key in batch.keys() if str(key) == name)
        copied[key] = value
        return copied
    raise TypeError(f"cannot replace field {name} of a {type(batch).__name__}")


def _copied(item: Any) -> Any:
    """A copy of a tensor with its strides: a strided slice stays one (a clone would
    make it contiguous, and so make every repair of it run)."""
    if not isinstance(item, torch.Tensor):
        return item
    if item.is_contiguous():
        return item.clone()
    copy = torch.empty_strided(
        item.size(), item.stride(), dtype=item.dtype, device=item.device
    )
    return copy.copy_(item)
