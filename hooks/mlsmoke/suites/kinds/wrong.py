"""``wrong``: the examples the model gets wrong (score below ``right-at``)."""

from __future__ import annotations

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    chosen = [e.index for e in evaluation.examples if not e.score >= settings.right_at]
    note = f"the examples scored below {settings.right_at:g} at record time"
    return [Selected("wrong", "wrong", note, sorted(chosen))]
