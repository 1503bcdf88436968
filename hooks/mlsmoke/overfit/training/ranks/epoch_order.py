"""Whether the project's own code changes a sharding sampler's order between epochs
(``sampler.set_epoch(epoch)``), where the project's code drives the epochs: script
mode, under ranks, or a loader object of the project's in factory mode
(``loader_epochs.py``).

A ``DistributedSampler`` that shuffles draws the same order at every epoch until
``set_epoch`` changes it. The pinned loader's first epoch is then as long as the
loader (each step yields the pinned batch); at each ``iter(loader)`` the order the
sampler would give now is read (under a forked RNG, so the script's draws do not
change) with the line that iterates. The second epoch is the pinned batch forever.
Two equal orders are the evidence; a loader that never reaches a second epoch, or a
sampler that does not shuffle, tells nothing.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import torch

from mlsmoke.overfit.training.script_frames import construction_site

INDICES_READ = 64  # the first indices of an epoch's order are enough to compare


class EpochOrder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.orders: list[list[int]] = []
        self.sites: list[str] = []
        self.sampler = ""

    def first_epoch_length(self, loader: Any) -> int | None:
        """How many steps the pinned loader's first epoch lasts; None: forever."""
        if len(self.orders) != 1 or not _reshuffles_with_set_epoch(loader):
            return None
        try:
            return len(loader)
        except TypeError:  # an iterable dataset: no length, no epochs to compare
            return None

    def new_epoch(self, loader: Any) -> None:
        """Note the order the pinned loader's sampler gives at this ``iter()``."""
        sampler = _sampler_of(loader)
        if len(self.orders) >= 2 or not _reshuffles_with_set_epoch(loader):
            return
        self.sampler = type(sampler).__name__
        with torch.random.fork_rng(devices=[]):
            order = [int(i) for i in itertools.islice(iter(sampler), INDICES_READ)]
        self.orders.append(order)
        self.sites.append(construction_site(self.root, sys._getframe(2), frames=1))


def _sampler_of(loader: Any) -> Any:
    batch_sampler = getattr(loader, "batch_sampler", None)
    return getattr(batch_sampler, "sampler", None) or getattr(loader, "sampler", None)


def _reshuffles_with_set_epoch(loader: Any) -> bool:
    sampler = _sampler_of(loader)
    return callable(getattr(sampler, "set_epoch", None)) and bool(
        getattr(sampler, "shuffle", False)
    )
