"""``not-learning`` from a regularizer in the loss: the loss callable returns a sum
whose one term the targets do not move (an L2 or entropy penalty added with a
weight), and the same run with that term left out memorizes: the penalty holds the
loss above what the batch's own term reaches. Asked before the lr range test, which
it spares, when the loss levels off above the target; and before ``wrong-objective``
when the loss is negative at init only because that term is (a confidence penalty,
a weight times the predictions' negative entropy), so that no target-ratio of it
means anything: the copy's target is then the ratio of its own initial loss. A copy
that does not memorize is listed as refuted, and the other causes are looked for."""

from __future__ import annotations

from mlsmoke.overfit.verdict.diagnoses import wrong_objective
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.diagnoses._stalled import stalled_above_target
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import no_regularizer
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "not-learning"


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    reading = stalled_above_target(run)
    if reading is None:
        return None
    term = no_regularizer.find(run)
    if term is None:
        return None
    outcome = no_regularizer.check(run, term)
    if not outcome.memorized:
        return None
    return Diagnosis(
        CODE,
        f"a term of the loss that the targets do not move ({term.value:.4g} of"
        f" {term.loss:.4g} at the start) keeps it above the target"
        f" {run.evidence.target:.4g}: {outcome.result()}",
        [reading.reason, _found(term)],
        _suggestions(outcome),
    )


@diagnoser(CODE)
def diagnose_negative_at_init(run: GateRun) -> Diagnosis | None:
    """The loss is below 0 at init because its regularizer is, while the data's
    term is not: the term, not the objective, is what the copy tests."""
    if not wrong_objective.negative_at_init(run):
        return None
    term = no_regularizer.find(run)
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
        _suggestions(outcome),
    )


def _found(term: no_regularizer.ExtraTerm) -> str:
    targets = ", ".join(term.targets)
    where = f" (added at {term.where})" if term.where else ""
    return (
        f"the loss callable returns a sum of two terms{where}; with the targets"
        f" ({targets}) paired with other samples, one term changes and the other"
        f" keeps its value {term.value:.4g}: a regularizer, not the data's term"
    )


def _suggestions(outcome) -> list[str]:
    return [
        "lower the regularizer's weight until the batch is memorized, or add the"
        f" term once it is  {outcome.mark()}",
        "a penalty on the weights alone belongs in the optimizer's weight_decay,"
        " which the gate also checks",
    ]
