"""``slice-<name>``: the examples the project's ``slice`` function puts in one slice
(by class, length or source), one suite per name."""

from __future__ import annotations

from itertools import compress

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    if settings.slice is None:
        return []
    names = set(evaluation.slices) - {None}
    every = range(len(evaluation.slices))
    return [
        Selected(f"slice-{name}", "slice", f"{settings.slice} -> {name!r}",
                 list(compress(every, map(name.__eq__, evaluation.slices))))
        for name in sorted(names)
    ]  # fmt: skip
