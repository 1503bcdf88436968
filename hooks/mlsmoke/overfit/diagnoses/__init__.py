"""The registry of diagnoses: each turns a GateRun into a Diagnosis, or passes (None).

Diagnosers are tried in order and the first answer wins. ``memorized`` and
``config-error`` come first; the specific causes of a failure follow; the two fallbacks,
``train-error`` and ``not-memorized``, come last and always answer. A new diagnosis is a
new module here plus a line in REGISTRY.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from mlsmoke.overfit.diagnoses import (
    config_error,
    memorized,
    not_memorized,
    train_error,
)

if TYPE_CHECKING:
    from mlsmoke.overfit.evidence import GateRun
    from mlsmoke.overfit.result import Diagnosis


class Diagnoser(Protocol):
    code: str

    def __call__(self, run: GateRun) -> Diagnosis | None: ...


REGISTRY: list[Diagnoser] = [
    memorized.diagnose,
    config_error.diagnose,
    train_error.diagnose,
    not_memorized.diagnose,
]


def diagnose(run: GateRun) -> Diagnosis:
    """The first diagnosis in REGISTRY that answers for ``run``."""
    for diagnoser in REGISTRY:
        found = diagnoser(run)
        if found is not None:
            return found
    raise AssertionError("the fallback diagnoses always answer")
