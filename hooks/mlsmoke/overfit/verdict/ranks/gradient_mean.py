"""The gradient ``optimizer.step()`` sees is the mean of the ranks' own gradients, as
DDP makes it. Compared along fixed random directions at the first update: a sum
(N times the mean) is named, as is a gradient that was not averaged at all, and a
loss already multiplied by N (rank 0's gradient N times its gradient of the same
batch in a world of one); in script mode, with the script's line that all-reduced it
by hand, or that ran the backward."""

from __future__ import annotations

import math

from mlsmoke.overfit.training.ranks.record import RankRecord
from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "gradient-not-averaged"
TOLERANCE = 1e-3  # relative, along each direction


def diagnose(ranks: Ranks) -> Diagnosis | None:
    records = [r for r in ranks.records if r.local_gradient and r.step_gradient]
    if len(records) != ranks.world_size or len(records) < 2:
        return None
    if len({r.hashes[0] for r in records if r.hashes}) > 1:
        return None  # the ranks started apart: params-out-of-sync says so
    n = len(records)
    mean = [sum(values) / n for values in zip(*(r.local_gradient for r in records))]
    scaled = _scaled_loss(records[0], n)
    if scaled is not None:
        return scaled
    for record in records:
        if _close(record.step_gradient, mean, 1.0):
            continue
        if _close(record.step_gradient, mean, float(n)):
            how = f"sum over the {n} ranks, not their mean ({n} times too large)"
            site = record.hand_reduce_site
            how += f"; all-reduced by hand at {site}" if site else ""
        elif _close(record.step_gradient, record.local_gradient, 1.0):
            how = "rank's own gradient: it was never averaged with the other ranks'"
            site = record.backward_site
            how += f" (its backward at {site})" if site else ""
        else:
            return None  # some other transformation (clipping): nothing to name
        summary = f"optimizer.step() on rank {record.rank} sees the {how}"
        evidence = [
            f"rank {r.rank}: its own gradient {_fmt(r.local_gradient)}, what step()"
            f" saw {_fmt(r.step_gradient)}"
            for r in records
        ] + [f"the mean of the ranks' own gradients: {_fmt(mean)}"]
        return Diagnosis(CODE, summary, evidence, [
            "divide the all-reduced gradient by dist.get_world_size()"
            " (dist.all_reduce(..., op=ReduceOp.AVG) on NCCL), or let DDP average it",
            "do not multiply the loss or the learning rate by the world size",
        ])  # fmt: skip
    return None


def _scaled_loss(record: RankRecord, n: int) -> Diagnosis | None:
    """Rank 0's own gradient is N times its gradient in a world of one: the loss
    scales itself by the world size, and DDP's mean makes the step N-fold."""
    local, reference = record.local_gradient, record.reference_gradient
    if not reference or not _close(local, reference, float(n)):
        return None
    site = record.backward_site
    return Diagnosis(
        CODE,
        f"each rank's loss is {n} times larger with {n} ranks than alone: its"
        f" gradient is {n} times the gradient of the same batch in a world of one,"
        " so the step DDP averages is N-fold"
        + (f" (the loss of the backward at {site})" if site else ""),
        [f"rank 0: its gradient with {n} ranks {_fmt(local)}, alone {_fmt(reference)}"],
        ["DDP already averages the gradients over the ranks: do not multiply the"
         " loss (or the learning rate) by dist.get_world_size()"],
    )  # fmt: skip


def _close(values: list[float], reference: list[float], scale: float) -> bool:
    return all(
        math.isclose(v, scale * r, rel_tol=TOLERANCE, abs_tol=1e-7)
        for v, r in zip(values, reference)
    )


def _fmt(values: list[float]) -> str:
    return "(" + ", ".join(f"{v:.4g}" for v in values) + ")"
