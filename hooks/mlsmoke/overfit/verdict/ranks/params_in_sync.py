"""The parameters are the same on every rank after construction and after each of
the first updates: a digest per rank, compared with rank 0's.

Each rank builds its model under a seed of its own, so only a broadcast (DDP's
constructor) makes them agree at first; only gradients averaged the same way on every
rank keep them agreeing. In script mode, the script's line that seeded the ranks
with different values is named."""

from __future__ import annotations

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "params-out-of-sync"


def diagnose(ranks: Ranks) -> Diagnosis | None:
    records = ranks.records
    if len(records) < 2:
        return None
    points = min(len(r.hashes) for r in records)
    for point in range(points):
        differ = [
            r.rank for r in records[1:] if r.hashes[point] != records[0].hashes[point]
        ]
        if not differ:
            continue
        when = "after construction" if point == 0 else f"after update {point}"
        summary = (
            f"the model's parameters differ between rank 0 and rank(s)"
            f" {', '.join(map(str, differ))} {when}"
        )
        seeded = seeded_apart(ranks) if point == 0 else ""
        if seeded:
            summary += f"; the ranks were seeded apart at {seeded}"
        return Diagnosis(CODE, summary, _evidence(ranks), _advice(point))
    return None


def seeded_apart(ranks: Ranks) -> str:
    """``train.py:210 (rank 0: 1337, rank 1: 1338)``: the first line whose seed
    differed across ranks before the first backward (script mode); "" if none."""
    for index, (_, site) in enumerate(ranks.records[0].seeds):
        values = {r.rank: r.seeds[index][0] for r in ranks.records
                  if len(r.seeds) > index and r.seeds[index][1] == site}  # fmt: skip
        if len(set(values.values())) > 1:
            each = ", ".join(f"rank {rank}: {v}" for rank, v in values.items())
            return f"{site} ({each})"
    return ""


def _evidence(ranks: Ranks) -> list[str]:
    return [
        f"rank {r.rank}: parameter digests {' '.join(r.hashes)}"
        f" (wrapped by {r.wrapped_by or 'nothing'})"
        for r in ranks.records
    ]


def _advice(point: int) -> list[str]:
    if point == 0:
        return [
            "wrap the model in DistributedDataParallel (its constructor broadcasts"
            " rank 0's parameters), or broadcast them yourself"
            " (dist.broadcast(p.data, src=0) for each parameter) before training",
        ]
    return [
        "every rank must apply the same averaged gradient: all-reduce every"
        " parameter's gradient and divide by the world size, or let DDP do it",
    ]
