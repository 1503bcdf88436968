"""Run one catalog case through the gate, as the worker runs a configured gate."""

from __future__ import annotations

import time
from dataclasses import dataclass

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.result import Result
from mlsmoke.overfit.settings import GateSettings

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


def settings_for(case: Case) -> GateSettings:
    options = {key.replace("-", "_"): value for key, value in case.options.items()}
    if case.optimizer is not None:
        options.setdefault("optimizer", "catalog:optimizer")
    return GateSettings(
        name=case.name,
        model="catalog:model",
        batch="catalog:batch",
        loss="catalog:loss" if case.loss is not None else None,
        device="cpu",
        **options,
    )


def run_case(case: Case) -> Outcome:
    factories = {"model": case.model, "batch": case.batch}
    if case.loss is not None:
        factories["loss"] = case.loss
    if case.optimizer is not None:
        factories["optimizer"] = case.optimizer
    started = time.perf_counter()
    result, _ = run_gate(settings_for(case), factories=factories)
    return Outcome(case, result, time.perf_counter() - started)
