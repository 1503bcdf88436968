"""Rank 0's script, run once more as one process (script mode), for what only a
world of one can tell:

- the lr the script builds its optimizer with alone
  (``verdict/ranks/lr_scaled_twice.py``);
- the gradient of its first update, on rank 0's own pinned batch, from the same
  parameters (the script seeds them as rank 0 did, and DDP broadcast rank 0's): a
  loss the script multiplies by the world size makes the ranked gradient N times
  this one (``verdict/ranks/gradient_mean.py``).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from mlsmoke.overfit.training.ranks.observe import ModelObserver
from mlsmoke.overfit.training.ranks.record import RankRecord
from mlsmoke.overfit.training.script_model import find_model
from mlsmoke.overfit.training.script_pin import PinnedBatch
from mlsmoke.overfit.training.script_points import ScriptWatch


def alone_points(
    ranked: PinnedBatch, alone: RankRecord
) -> Callable[[ScriptWatch, PinnedBatch], Any]:
    """The points of the run alone: pinned to ``ranked``'s batch, and observed from
    its first backward into ``alone`` (its ``local_gradient``)."""

    @contextmanager
    def points(watch: ScriptWatch, pin: PinnedBatch) -> Iterator[None]:
        if ranked.fetched:
            pin.keep(copy.deepcopy(ranked.batch), ranked.source)
        undo = _observe_from_first_backward(watch, alone)
        try:
            yield
        finally:
            undo()

    return points


def _observe_from_first_backward(
    watch: ScriptWatch, alone: RankRecord
) -> Callable[[], None]:
    original = torch.autograd.backward
    observers: list[ModelObserver] = []

    def backward(*args: Any, **kwargs: Any) -> None:
        if not observers and watch.optimizer is not None:
            groups = watch.optimizer.param_groups
            parameters = [p for group in groups for p in group["params"]]
            model = find_model(parameters, sys._getframe(1))
            if model is not None:
                observers.append(ModelObserver(model, alone))
                observers[0].watch(watch.optimizer)
        original(*args, **kwargs)

    def undo() -> None:
        torch.autograd.backward = original
        for observer in observers:
            observer.close()

    torch.autograd.backward = backward
    return undo
