"""What one rank saw, as plain values: written by the rank, read by the launcher.

No torch here: the records are JSON, and the checks in ``verdict/ranks/`` are
decisions over plain values.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

# What a collective raises when another rank never came, or went away; the step's
# monitored barrier (``step_barrier.py``) says so in its own words.
COLLECTIVE_GAVE_UP = ("Timed out", "timed out", "Connection closed by peer",
                      "Connection reset by peer", "DistNetworkError",
                      "monitoredBarrier")  # fmt: skip
_BARRIER_LIST = re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier")
_BARRIER_ROOT = re.compile(r"reached monitoredBarrier, but .* from rank (\d+)")


def gave_up_waiting(error: str) -> bool:
    """Whether ``error`` is a collective that gave up on the other ranks."""
    return any(text in error for text in COLLECTIVE_GAVE_UP)


def barrier_missing(error: str) -> list[int]:
    """The ranks a monitored barrier's ``error`` names as not arrived: rank 0 lists
    them; another rank can only name rank 0, which did not answer. [] otherwise."""
    listed = _BARRIER_LIST.search(error)
    if listed is not None:
        return [int(rank) for rank in re.findall(r"\d+", listed.group(1))]
    root = _BARRIER_ROOT.search(error)
    return [int(root.group(1))] if root is not None else []


@dataclass
class RankRecord:
    rank: int
    world_size: int
    wrapped_by: str = ""  # "gate", the wrapper's class name (the project's), or ""
    # A digest of the parameters after construction, then after each of the first
    # updates: identical on every rank when they are in sync.
    hashes: list[str] = field(default_factory=list)
    # The parameter names DDP indexes (those that require grad, in order).
    parameter_names: list[str] = field(default_factory=list)
    batchnorm: list[str] = field(default_factory=list)  # BatchNorm modules, not Sync
    batch_size: int | None = None
    batch_digest: str = ""  # of the whole batch
    sample_digests: list[str] = field(default_factory=list)  # one per sample
    sampler: str = ""  # the loader's sampler class, when the batch came from one
    # At the first update: projections of the gradient each rank's own backward made
    # (before any all-reduce) and of the gradient optimizer.step() saw.
    local_gradient: list[float] = field(default_factory=list)
    step_gradient: list[float] = field(default_factory=list)
    # The same projection of rank 0's gradient of the same batch in a world of one.
    reference_gradient: list[float] = field(default_factory=list)
    # Per update: backward passes, and how many of them synced through DDP.
    backwards: list[int] = field(default_factory=list)
    synced_backwards: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    error: str = ""  # "Type: message" of the run's error
    traceback: str = ""  # the project's frames of it
    result: dict[str, Any] | None = None  # rank 0: the gate's Result, as JSON
    # Script mode: whether the script had started a process group when it stopped.
    process_group: bool = True
    # Script mode, or a loader object that drives its own epochs: the first indices
    # of the loader's sampler at each of its first two epochs, the line that iterated
    # it each time, and the sampler's class.
    epoch_orders: list[list[int]] = field(default_factory=list)
    epoch_sites: list[str] = field(default_factory=list)
    epoch_sampler: str = ""
    # Rank 0: the lr the project's optimizer (the script's, or the optimizer
    # callable's) was built with under N ranks, and as one process (0: not known),
    # and where it was built.
    lr_ranked: float = 0.0
    lr_alone: float = 0.0
    lr_site: str = ""
    # Script mode: the project's lines the codes name (script_sites.py): where the
    # rank's first batch was fetched, where its first backward() was called, where a
    # gradient was all-reduced by hand, and each seed set before the first backward
    # as [value, line].
    batch_site: str = ""
    backward_site: str = ""
    hand_reduce_site: str = ""
    seeds: list[list[Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RankRecord:
        return cls(**data)
