"""The ranks stop at the same step.

Each rank judges its own shard's loss, but a rank that stops while the others train
on leaves them waiting in DDP's next all-reduce. So each step's decision is agreed:
the ranks stop together when every rank wants to stop, or when one of them must
(its time or its steps are up). Before the vote, every rank passes the step's
monitored barrier (``step_barrier.py``), which names a rank that never arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # torch.distributed: only ranks import it
    from mlsmoke.overfit.training.ranks.step_barrier import StepBarrier

Agreement = Callable[[bool, bool], bool]

# Set by a rank for its distributed run; None outside one (and in a world of one).
current: Agreement | None = None


def agree(wants: bool, must: bool) -> bool:
    """Whether all ranks stop now, given this rank's wish and its obligation."""
    import torch.distributed as dist  # only ranks import it

    votes = torch.tensor([int(wants), int(must)], dtype=torch.int64)
    dist.all_reduce(votes)  # gloo and NCCL both sum int64 on the CPU
    return bool(votes[0] == dist.get_world_size() or votes[1] > 0)


def agreeing_at(barrier: StepBarrier | None) -> Agreement:
    """``agree``, once every rank has passed ``barrier`` (when there is one)."""

    def agree_after_barrier(wants: bool, must: bool) -> bool:
        if barrier is not None:
            barrier.wait()
        return agree(wants, must)

    return agree_after_barrier
