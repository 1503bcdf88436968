"""``not-learning`` from a regularizer in the loss: the loss levels off above the
target, the loss callable returns a sum whose one term the targets do not move (an
L2 or entropy penalty added with a weight), and the same run with that term left out
memorizes: the penalty holds the loss above what the batch's own term reaches.
Asked before the lr range test, which it spares; a copy that does not memorize is
listed as refuted, and the other causes are looked for."""

from __future__ import annotations

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
    targets = ", ".join(term.targets)
    return Diagnosis(
        CODE,
        f"a term of the loss that the targets do not move ({term.value:.4g} of"
        f" {term.loss:.4g} at the start) keeps it above the target"
        f" {run.evidence.target:.4g}: {outcome.result()}",
        [
            reading.reason,
            f"the loss callable returns a sum of two terms; with the targets"
            f" ({targets}) paired with other samples, one term changes and the other"
            f" keeps its value {term.value:.4g}: a regularizer, not the data's term",
        ],
        [
            "lower the regularizer's weight until the batch is memorized, or add the"
            f" term once it is  {outcome.mark()}",
            "a penalty on the weights alone belongs in the optimizer's weight_decay,"
            " which the gate also checks",
        ],
    )
