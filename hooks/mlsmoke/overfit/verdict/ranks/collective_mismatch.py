"""A collective that only some ranks reach, or that they reach in different orders.

Either a rank gave up waiting in it (collective-timeout), the step's monitored barrier
found ranks that never reached the step (``training/ranks/step_barrier.py``), or gloo
found that the ranks' collectives did not match and aborted the rank (SIGABRT inside
torch.distributed). Each rank's frames show where it was; the innermost line of the
project's code among them, the missing ranks' first, is the collective inside an
``if rank == 0:``."""

from __future__ import annotations

import signal

from mlsmoke.overfit.training.ranks.record import gave_up_waiting
from mlsmoke.overfit.verdict.ranks.ends import RankEnd, Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "collective-mismatch"


def diagnose(ranks: Ranks) -> Diagnosis | None:
    stuck = [end for end in ranks.ends if _aborted_in_collective(end) or _waited(end)]
    others = [end for end in ranks.ends if end not in stuck]
    if not stuck or any(_failed(end) for end in others):
        return None  # a rank that failed on its own: rank-failed names it
    missing = ranks.missed_the_barrier()
    first = sorted(stuck, key=lambda end: end.rank not in missing)
    where = next((ranks.innermost_line(end) for end in first
                  if ranks.innermost_line(end)), "")  # fmt: skip
    if missing:
        summary = (
            f"rank(s) {_names(missing)} never reached the step's monitored barrier:"
            " stopped in a collective the other ranks did not make"
        )
    else:
        names = _names([end.rank for end in stuck])
        summary = (
            f"rank(s) {names} stopped in a collective the other ranks did not make"
        )
    return Diagnosis(
        CODE,
        summary + (f", at {where}" if where else ""),
        ranks.barrier_evidence() + ranks.stacks_evidence(),
        [
            "every rank must make every collective (all_reduce, barrier, broadcast),"
            " in the same order: move it out of `if rank == 0:`, or make it on every"
            " rank and use the result on rank 0",
        ],
    )


def _aborted_in_collective(end: RankEnd) -> bool:
    return end.code == -signal.SIGABRT and "torch/distributed/" in end.stack


def _waited(end: RankEnd) -> bool:
    return end.record is not None and gave_up_waiting(end.record.get("error", ""))


def _failed(end: RankEnd) -> bool:
    return end.record is None or bool(end.record.get("error"))


def _names(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))
