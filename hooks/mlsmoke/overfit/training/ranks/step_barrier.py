"""A monitored barrier at each of the gate's steps: every rank must reach the step's
agreement (``agreement.py``) within collective-timeout, and the ranks that do not are
named by the barrier itself.

A collective that only some ranks make leaves those ranks waiting in it; the others
reach the step and wait here. ``monitored_barrier`` is gloo's alone, so it runs on a
gloo group beside the default one, made when the process group starts (under NCCL as
under gloo): it never waits behind the project's collectives, and a project's
collective never pairs with it. Its error names the ranks: rank 0 lists those that did
not arrive ("Ranks 1 failed to pass monitoredBarrier"), another rank names rank 0 when
rank 0 did not ("... from rank 0"); ``record.barrier_missing`` reads them back.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist


class StepBarrier:
    def __init__(self, group: Any, timeout: timedelta) -> None:
        self.group, self.timeout = group, timeout

    @classmethod
    def beside_default_group(cls, timeout: timedelta) -> StepBarrier | None:
        """The barrier on a new gloo group of every rank; None where gloo cannot make
        one on some rank (the ranks then rely on collective-timeout alone). Every
        rank must call this at the same point, as ``new_group`` asks; the ranks agree
        on the outcome, so that none waits at a barrier the others skip."""
        try:
            group = dist.new_group(backend="gloo", timeout=timeout)
        except Exception:  # no gloo in this build: the time limit still holds
            group = None
        if not _made_on_every_rank(group is not None):
            return None
        return cls(group, timeout)

    def wait(self) -> None:
        """Return once every rank is here; RuntimeError naming the missing ranks
        after ``timeout``."""
        dist.monitored_barrier(
            group=self.group, timeout=self.timeout, wait_all_ranks=True
        )


def _made_on_every_rank(made: bool) -> bool:
    on = "cuda" if dist.get_backend() == "nccl" else "cpu"
    votes = torch.tensor([int(made)], device=on)
    dist.all_reduce(votes, op=dist.ReduceOp.MIN)
    return bool(votes.item())
