"""``hard``: the k examples with the highest loss (ties broken by index)."""

from __future__ import annotations

import math

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    ranked = sorted(evaluation.examples, key=lambda e: (-_finite(e.loss), e.index))
    chosen = sorted(example.index for example in ranked[: settings.hard])
    note = f"the {len(chosen)} examples with the highest loss"
    return [Selected("hard", "hard", note, chosen)]


def _finite(loss: float) -> float:
    """A NaN loss ranks first: it is the hardest example there is."""
    return math.inf if math.isnan(loss) else loss
