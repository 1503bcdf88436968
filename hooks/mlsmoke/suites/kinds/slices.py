"""``slice-<name>``: the examples the project's ``slice`` function puts in one slice
(by class, length or source), one suite per name."""

from __future__ import annotations

from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    if settings.slice is None:
        return []
    members: dict[str, list[int]] = {}
    for index, name in enumerate(evaluation.slices):
        if name is not None:
            members.setdefault(name, []).append(index)
    return [
        Selected(f"slice-{name}", "slice", f"{settings.slice} -> {name!r}",
                 members[name])
        for name in sorted(members)
    ]  # fmt: skip
