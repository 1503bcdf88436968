"""The ranks stop at the same step.

Each rank judges its own shard's loss, but a rank that stops while the others train
on leaves them waiting in DDP's next all-reduce. So each step's decision is agreed:
the ranks stop together when every rank wants to stop, or when one of them must
(its time or its steps are up).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Agreement = Callable[[bool, bool], bool]

# Set by a rank for its distributed run; None outside one (and in a world of one).
current: Agreement | None = None


def agree(wants: bool, must: bool) -> bool:
    """Whether all ranks stop now, given this rank's wish and its obligation."""
    import torch.distributed as dist  # only ranks import it

    votes = torch.tensor([int(wants), int(must)], dtype=torch.int64)
    dist.all_reduce(votes)  # gloo and NCCL both sum int64 on the CPU
    return bool(votes[0] == dist.get_world_size() or votes[1] > 0)
