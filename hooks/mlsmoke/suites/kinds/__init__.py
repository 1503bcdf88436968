"""The suite kinds, one module each, with the same face: ``select(evaluation,
settings) -> list[Selected]``. Adding a kind is adding a module and a line here."""

from __future__ import annotations

from typing import NamedTuple

from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings


class Selected(NamedTuple):
    """A suite chosen from an evaluation: its name, kind, note and examples."""

    name: str
    kind: str
    note: str
    indices: list[int]


def select_all(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    """Every suite the settings ask for, in a stable order."""
    from mlsmoke.suites.kinds import by_hand, hard, slices, wrong

    chosen: list[Selected] = []
    for kind in (hard, wrong, slices, by_hand):
        chosen += kind.select(evaluation, settings)
    return chosen
