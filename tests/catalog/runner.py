"""Run one catalog case through the gate, as ``mlsmoke.overfit.check`` does, keeping the
probes it ran."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from mlsmoke.overfit import api
from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.verdict.result import Result

from .cases import Case


@dataclass
class Outcome:
    case: Case
    result: Result
    seconds: float  # the whole gate: training, probes, checks
    cpu_seconds: float  # the same, in this process's CPU time: what load cannot inflate
    probe_steps: list[int]  # optimizer steps of each probe re-run
    threads: int = 1  # torch's intra-op threads the case ran on (CPU time counts all)

    @property
    def code(self) -> str:
        return self.result.diagnosis.code

    @property
    def warnings(self) -> frozenset[str]:
        return frozenset(w.code for w in self.result.warnings)

    @property
    def right(self) -> bool:
        return self.code == self.case.code and self.warnings == self.case.warnings

    @property
    def probe_cost(self) -> float:
        """Probe training relative to the run itself, in optimizer steps."""
        return sum(self.probe_steps) / max(self.result.steps, 1)


def assert_right(outcome: Outcome) -> None:
    """The case got its code and warnings and says its phrase; a bug fails with
    evidence and suggestions, a correct model passes."""
    case, result = outcome.case, outcome.result
    told = "\n".join([result.diagnosis.summary, *result.diagnosis.evidence])
    assert (outcome.code, sorted(outcome.warnings)) == (
        case.code,
        sorted(case.warnings),
    ), f"{case.bug or 'correct model'}: {told}"
    assert case.says in told
    if case.kind == "bug":
        assert result.verdict == "fail"
        assert result.diagnosis.evidence and result.diagnosis.suggestions
    else:
        assert result.passed


def assert_plain_loop_agrees(case: Case, memorized: bool, outcome: object) -> None:
    """A plain loop memorizes every correct model and no bug."""
    if case.kind == "bug":
        assert not memorized, f"{case.bug}: memorized in a plain loop"
    else:
        assert memorized, f"{case.name} did not memorize: {outcome}"


def run_case(case: Case, tier: str = "commit") -> Outcome:
    """The case on the CPU at ``tier``, with the Python API's settings."""
    options = {
        "optimizer": None,  # unset: a LightningModule trains its own recipe
        "lr": None,
        "max-steps": None,
        "target-loss": None,
        "target-ratio": None,
        "device": "cpu",
        "seed": 0,
        "timeout": None,
    }
    options.update({key.replace("_", "-"): v for key, v in case.options.items()})
    settings = api._settings(options, tier)
    factories = {"model": case.model, "batch": case.batch}
    if case.loss is not None:
        factories["loss"] = case.loss
    if case.optimizer is not None:
        factories["optimizer"] = case.optimizer
        settings.optimizer, settings.lr = "custom", None
        settings.unset = [key for key in settings.unset if key != "optimizer"]
    started, cpu_started = time.perf_counter(), time.process_time()
    result, run = run_gate(settings, factories=factories)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    probes = [] if run is None else [probe.steps for probe in run.probes]
    threads = torch.get_num_threads()
    return Outcome(case, result, seconds, cpu_seconds, probes, threads)
