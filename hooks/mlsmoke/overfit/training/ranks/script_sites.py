"""The script's lines the rank codes name, each read where it happens while the
script runs under ranks (script mode):

- every ``torch.manual_seed`` the script calls before its first backward, with its
  value: a line whose value differs across ranks seeded them apart;
- a ``dist.all_reduce`` of a parameter's gradient: the script averages by hand there;
- the line of the first ``backward()`` (``script_rank.py`` notes it), and the line
  that fetched the pinned batch (``script_pin.py``).

Only the project's own frames are named (``script_frames.py``); a call from a library
names nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from mlsmoke.overfit.training.ranks.record import RankRecord
from mlsmoke.overfit.training.script_frames import construction_site
from mlsmoke.overfit.training.script_points import ScriptWatch

SEEDS_KEPT = 8


def watch_seeds(record: RankRecord, watch: ScriptWatch) -> Callable[[], None]:
    """Note the script's seeds until its first backward; returns the undo."""
    original = torch.manual_seed

    def manual_seed(seed: Any, *args: Any, **kwargs: Any) -> Any:
        site = construction_site(watch.root, sys._getframe(1), frames=1)
        early = not record.backward_site and len(record.seeds) < SEEDS_KEPT
        if site and early and isinstance(seed, int):
            record.seeds.append([seed, site])
        return original(seed, *args, **kwargs)

    torch.manual_seed = manual_seed
    return lambda: setattr(torch, "manual_seed", original)


def watch_hand_reduce(record: RankRecord, watch: ScriptWatch) -> Callable[[], None]:
    """Note the line of the first all-reduce of an optimizer parameter's gradient;
    returns the undo."""
    owners = [dist, dist.distributed_c10d]
    original = dist.all_reduce

    def all_reduce(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        if not record.hand_reduce_site and _is_a_gradient(tensor, watch):
            record.hand_reduce_site = construction_site(
                watch.root, sys._getframe(1), frames=1
            )
        return original(tensor, *args, **kwargs)

    for owner in owners:
        owner.all_reduce = all_reduce  # type: ignore[assignment]
    return lambda: [setattr(owner, "all_reduce", original) for owner in owners]


def _is_a_gradient(tensor: Any, watch: ScriptWatch) -> bool:
    if watch.optimizer is None or not isinstance(tensor, torch.Tensor):
        return False
    return any(
        parameter.grad is tensor
        for group in watch.optimizer.param_groups
        for parameter in group["params"]
    )
