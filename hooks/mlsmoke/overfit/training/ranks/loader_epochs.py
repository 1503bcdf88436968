"""Two epochs of a loader object that drives its own (factory mode, under ranks): a
batch callable's object whose iteration sets up each epoch itself (a custom loader
class around a ``DataLoader``), so the project's code, not the gate, decides whether
the sampler is told the epoch.

The object is iterated twice, one step each, under a forked RNG; at each
``iter(DataLoader)`` it makes, the sampler's order is read (``epoch_order.py``).
A plain ``DataLoader`` is iterated by the gate, which tells it no epoch: not judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from mlsmoke.overfit.training.ranks.epoch_order import EpochOrder


def loader_object_epochs(produced: Any, root: Path) -> EpochOrder | None:
    """The orders of two epochs of ``produced``; None when it is not a loader
    object that drives its own epochs."""
    if not drives_its_own_epochs(produced):
        return None
    epochs = EpochOrder(root)
    original = DataLoader.__iter__

    def noting_the_order(loader: DataLoader) -> Any:
        epochs.new_epoch(loader)  # its frame 2: the project's line that iterates
        return original(loader)

    DataLoader.__iter__ = noting_the_order  # type: ignore[method-assign]
    try:
        with torch.random.fork_rng(devices=[]):
            for _ in range(2):
                next(iter(produced), None)
    finally:
        DataLoader.__iter__ = original  # type: ignore[method-assign]
    return epochs


def drives_its_own_epochs(produced: Any) -> bool:
    """An object the project wrote that can be iterated again and again: not a
    DataLoader, a batch, a container, nor a one-pass iterator."""
    plain = (DataLoader, torch.Tensor, Mapping, Sequence, str, bytes)
    if isinstance(produced, plain) or not hasattr(type(produced), "__iter__"):
        return False
    return not hasattr(type(produced), "__next__")
