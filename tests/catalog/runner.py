"""Run one catalog case through the gate's Python API."""

from __future__ import annotations

import time
from dataclasses import dataclass

from mlsmoke.overfit.api import check
from mlsmoke.overfit.result import Result

from .cases import Case


@dataclass
class Outcome:
    case: Case
    result: Result
    seconds: float  # the whole gate: training, probes, checks

    @property
    def code(self) -> str:
        return self.result.diagnosis.code

    @property
    def warnings(self) -> frozenset[str]:
        return frozenset(w.code for w in self.result.warnings)

    @property
    def right(self) -> bool:
        return self.code == self.case.code and self.warnings == self.case.warnings


def run_case(case: Case) -> Outcome:
    """The case through the Python API, on the CPU, at the commit tier."""
    options = dict(case.options)
    if case.optimizer is not None:
        options["optimizer"] = case.optimizer
    started = time.perf_counter()
    result = check(case.model, case.batch, case.loss, device="cpu", **options)
    return Outcome(case, result, time.perf_counter() - started)
