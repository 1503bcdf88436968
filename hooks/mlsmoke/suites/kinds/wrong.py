"""``wrong``: the examples the model gets wrong (score below ``right-at``)."""

from __future__ import annotations

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    right_at = settings.right_at
    chosen = [i for i, score in enumerate(evaluation.scores) if not score >= right_at]
    note = f"the examples scored below {settings.right_at:g} at record time"
    return [Selected("wrong", "wrong", note, chosen)]
