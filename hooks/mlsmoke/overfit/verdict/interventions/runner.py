"""Run one intervention: the gate's training again on a changed copy, within the
budget that all interventions of a gate run share (BUDGET_SECONDS of CPU time, stated
with -v), itself within the gate's budget for everything after its run
(``diagnosis_budget.py``).

Interventions run only after a failing run: a pass costs nothing. Each outcome is
kept per gate run, so that a diagnosis asking again, and the fallback that says what
was tried, read the same answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import curve, curve_measures, diagnosis_budget, probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import MEMORIZED, Diagnosis

BUDGET_SECONDS = 5.0
# Below this many seconds left, an intervention is not started: it could not train.
MIN_SECONDS = 0.25
# "Measurably closer": this much more of the way to the target than the original run
# covered in the same steps, and still falling at the end.
CLOSER = 0.25
_OUTCOMES = "interventions"
_SPENT = "intervention-seconds"


@dataclass
class Outcome:
    """What one intervention did: ``change`` says it ("with the base unfrozen"),
    ``probe`` is its run, or ``skipped`` why it could not run."""

    change: str
    probe: Evidence | None = None
    closer: bool = False  # measurably closer than the original in the same steps
    # as much closer, but levelling off above the target: the cause is real, and
    # another one remains; not a refutation
    helped: bool = False
    skipped: str = ""
    # another variant of the same change confirmed the cause: not a refutation
    superseded: bool = False
    # another cause (frozen parameters) holds the copy back as well: not a refutation
    held_back: bool = False

    @property
    def memorized(self) -> bool:
        return self.probe is not None and probes.memorized(self.probe)

    @property
    def confirms(self) -> bool:
        """The cause it tests is shown: the copy memorizes or gets measurably
        closer."""
        return self.memorized or self.closer

    @property
    def refutes(self) -> bool:
        """The copy trained without an error and did not get closer: the cause is
        not shown. A copy that raised, or left no curve, shows nothing either way."""
        probe = self.probe
        return (
            probe is not None
            and not self.superseded
            and not self.held_back
            and not self.helped
            and not probe.timed_out  # cut by a budget, not by its curve
            and probe.error is None
            and len(probe.losses) >= 2
            and not self.confirms
        )

    def result(self) -> str:
        """``with the base unfrozen the batch is memorized in 84 steps``."""
        probe = self.probe
        if probe is None:
            return f"{self.change}: not run ({self.skipped})"
        if not probe.losses and probe.error is None:
            return f"{self.change}: no loss recorded"
        if self.memorized:
            return f"{self.change} the batch is memorized in {probe.steps} steps"
        if probe.error is not None:
            return f"{self.change} the step raised {type(probe.error).__name__}"
        losses = probe.losses
        closer = ", closer than the original" if self.closer else ""
        if self.helped and not self.closer:
            closer = ", closer than the original, then levelling off above the target"
        return (
            f"{self.change} the loss went {losses[0]:.4g} -> {losses[-1]:.4g} in"
            f" {probe.steps} steps{closer}, not memorized"
        )

    def mark(self) -> str:
        """The mark a cause this outcome confirms carries."""
        return f"(checked: {self.result()})"


def intervene(run: GateRun, change: str, train: Callable[[float], Evidence]) -> Outcome:
    """The outcome of ``train(cpu_seconds)`` (a probe of ``run`` with one thing
    changed, given its share of the budget), once per gate run and ``change``;
    skipped when the budget is spent or the run itself hit its timeout."""
    outcomes: dict[str, Outcome] = run.memo.setdefault(_OUTCOMES, {})
    if change not in outcomes:
        outcomes[change] = _run(run, change, train)
    return outcomes[change]


def probe(run: GateRun, change: str, **overrides: Any) -> Outcome:
    """:func:`intervene` with a probe of ``run`` given ``overrides`` (train()'s
    keywords, and ``model_factory``)."""
    return intervene(
        run,
        change,
        lambda seconds: run.probe(
            cpu_seconds=seconds, timeout=probes.probe_timeout(run), **overrides
        ),
    )


def outcomes(run: GateRun) -> list[Outcome]:
    """Every intervention this gate run tried, in order."""
    return list(run.memo.get(_OUTCOMES, {}).values())


def refuted(run: GateRun) -> list[Outcome]:
    return [outcome for outcome in outcomes(run) if outcome.refutes]


def annotate(run: GateRun, diagnosis: Diagnosis) -> Diagnosis:
    """A failure's report lists the interventions that refuted a cause."""
    if diagnosis.code == MEMORIZED:
        return diagnosis
    diagnosis.evidence += [
        f"tried on a copy of the model, refuted: {outcome.result()}"
        for outcome in refuted(run)
    ]
    return diagnosis


def _run(run: GateRun, change: str, train: Callable[[float], Evidence]) -> Outcome:
    spent = run.memo.get(_SPENT, 0.0)
    left = BUDGET_SECONDS - spent
    if not probes.may_probe(run):
        return Outcome(change, skipped="the run itself reached its timeout")
    if left < MIN_SECONDS:
        return Outcome(
            change,
            skipped=f"the {BUDGET_SECONDS:g} s budget for interventions is spent",
        )
    if diagnosis_budget.left(run.cpu_deadline) < MIN_SECONDS:
        return Outcome(change, skipped="the gate's budget after its run is spent")
    started = diagnosis_budget.cpu_now()
    try:
        evidence = train(left)
    except Exception as error:  # the project's code in a changed copy
        evidence = Evidence(error=error)
    seconds = diagnosis_budget.cpu_now() - started
    run.memo[_SPENT] = spent + seconds
    run.notes.append(
        f"intervention {change}: {seconds:.2f} s CPU ({spent + seconds:.2f} of"
        f" {BUDGET_SECONDS:g} s for interventions)"
    )
    helped = _helped(run.evidence, evidence)
    return Outcome(
        change, evidence, helped and _falling(evidence, run.evidence.target), helped
    )


def _helped(original: Evidence, changed: Evidence) -> bool:
    """The copy covered CLOSER more of the way to the target in the same steps."""
    if changed.error is not None or not changed.losses or not original.losses:
        return False
    length = min(len(changed.losses), len(original.losses))
    target = original.target
    gained = curve_measures.relative_progress(changed.losses[:length], target)
    return (
        gained - curve_measures.relative_progress(original.losses[:length], target)
        >= CLOSER
    )


def _falling(changed: Evidence, target: float | None) -> bool:
    """Still falling at its end: a copy that levels off above the target has a
    cause of its own as well."""
    shape = curve.classify_curve(changed.losses, target).shape
    return shape in (curve.FALLING, curve.FALLING_TOO_SLOWLY)
