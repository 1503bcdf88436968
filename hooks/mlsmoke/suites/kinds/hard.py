"""``hard``: the k examples with the highest loss (ties broken by index)."""

from __future__ import annotations

import heapq
import math

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    # a NaN loss ranks first: it is the hardest example there is
    rank = [-loss if loss == loss else -math.inf for loss in evaluation.losses]
    # nsmallest is stable: of equal losses, the lower index is taken
    top = heapq.nsmallest(settings.hard, range(len(rank)), key=rank.__getitem__)
    chosen = sorted(top)
    note = f"the {len(chosen)} examples with the highest loss"
    return [Selected("hard", "hard", note, chosen)]
