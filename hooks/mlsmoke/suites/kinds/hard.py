"""``hard``: the k examples with the highest loss (ties broken by index)."""

from __future__ import annotations

import heapq
import math

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    losses = evaluation.losses
    every = range(len(losses))
    if any(map(math.isnan, losses)):  # a NaN loss ranks first: the hardest there is
        rank = [loss if loss == loss else math.inf for loss in losses]
        top = heapq.nlargest(settings.hard, every, key=rank.__getitem__)
    else:  # nlargest keeps the order of equals: of equal losses, the lower index
        top = heapq.nlargest(settings.hard, every, key=losses.__getitem__)
    chosen = sorted(top)
    note = f"the {len(chosen)} examples with the highest loss"
    return [Selected("hard", "hard", note, chosen)]
