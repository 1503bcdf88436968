"""``not-learning`` from a regularizer in the loss: the loss (a loss callable's, or
the one the model's forward computes) is a sum whose one term the targets do not
move (an L2 or entropy penalty added with a weight), and the same run with that term
left out memorizes: the penalty holds the loss above what the batch's own term
reaches. Asked before the lr range test, which it spares, when the loss levels off
above the target; and before ``wrong-objective`` when the loss is negative at init
only because that term is (a confidence penalty, a weight times the predictions'
negative entropy), so that no target-ratio of it means anything: the copy's target
is then the ratio of its own initial loss. A copy that does not memorize is listed
as refuted, and the other causes are looked for. A copy that cannot run (a script
computes its own loss) leaves the cause to evidence: named after the lr probes
found no other, marked not checked."""

from __future__ import annotations

from mlsmoke.overfit.verdict import loss_terms
from mlsmoke.overfit.verdict.diagnoses import wrong_objective
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.diagnoses._stalled import stalled_above_target
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import no_regularizer, runner
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "not-learning"


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    reading = stalled_above_target(run)
    if reading is None:
        return None
    term = loss_terms.find(run)
    if term is None:
        return None
    outcome = no_regularizer.check(run, term)
    if not outcome.memorized:
        return None
    return _floor(run, term, reading.reason, outcome.result(), outcome.mark())


@diagnoser(CODE)
def diagnose_unchecked(run: GateRun) -> Diagnosis | None:
    """The same evidence, when the copy could not run; asked after the lr probes."""
    reading = stalled_above_target(run)
    term = loss_terms.find(run) if reading is not None else None
    if reading is None or term is None:
        return None
    reason = _not_run(no_regularizer.check(run, term))
    if reason is None:
        return None
    mark = f"(not checked: {reason})"
    return _floor(
        run, term, reading.reason, f"the regularizer may set the floor {mark}", mark
    )


@diagnoser(CODE)
def diagnose_negative_at_init(run: GateRun) -> Diagnosis | None:
    """The loss is below 0 at init because its regularizer is, while the data's
    term is not: the term, not the objective, is what the copy tests."""
    if not wrong_objective.negative_at_init(run):
        return None
    term = loss_terms.find(run)
    if term is None or term.value >= 0 or term.loss - term.value < 0:
        return None
    outcome = no_regularizer.check(
        run,
        term,
        target_loss=run.settings.target_loss,
        target_ratio=run.settings.target_ratio,
    )
    if not outcome.memorized:
        return None
    data = term.loss - term.value
    return Diagnosis(
        CODE,
        f"a term of the loss that the targets do not move ({term.value:.4g} of"
        f" {term.loss:.4g} at the start) makes it negative, where no target-ratio"
        f" of it means anything: {outcome.result()}",
        [
            f"the loss is negative at init ({term.loss:.4g}) only through that term:"
            f" the data's term is {data:.4g}",
            _found(term),
        ],
        _suggestions(outcome.mark()),
    )


def _floor(
    run: GateRun, term: loss_terms.ExtraTerm, curve: str, result: str, mark: str
) -> Diagnosis:
    return Diagnosis(
        CODE,
        f"a term of the loss that the targets do not move ({term.value:.4g} of"
        f" {term.loss:.4g} at the start) keeps it above the target"
        f" {run.evidence.target:.4g}: {result}",
        [curve, _found(term)],
        _suggestions(mark),
    )


def _not_run(outcome: runner.Outcome) -> str | None:
    """Why the copy could not run (skipped, or its step raised: it shows nothing
    either way); None when it trained."""
    if outcome.probe is None:
        return f"{outcome.change}: not run, {outcome.skipped}"
    error = outcome.probe.error
    if error is None:
        return None
    return f"{outcome.change} the copy could not run: {str(error)[:200]}"


def _found(term: loss_terms.ExtraTerm) -> str:
    targets = ", ".join(term.targets)
    where = f" (added at {term.where})" if term.where else ""
    if term.inside_model:
        source = "the model's loss is"
        paired = f"with each of {targets} paired on its own with other samples"
    else:
        source = "the loss callable returns"
        paired = f"with the targets ({targets}) paired with other samples"
    return (
        f"{source} a sum of two terms{where}; {paired},"
        f" one term changes and the other keeps its value {term.value:.4g}: a"
        " regularizer, not the data's term"
    )


def _suggestions(mark: str) -> list[str]:
    return [
        "lower the regularizer's weight until the batch is memorized, or add the"
        f" term once it is  {mark}",
        "a penalty on the weights alone belongs in the optimizer's weight_decay,"
        " which the gate also checks",
    ]
