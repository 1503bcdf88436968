"""``not-learning`` from weight decay: the loss levels off above the target, the
optimizer's groups decay the weights by more than the usual range, and the same run
with weight_decay 0 memorizes: the regularizer holds the weights nearer 0 than the
batch needs. Asked before the lr range test, which it spares; a copy that does not
memorize is listed as refuted, and the other causes are looked for."""

from __future__ import annotations

from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.diagnoses._stalled import stalled_above_target
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import no_weight_decay
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "not-learning"
# AdamW's usual decay is 0.01 to 0.1 (SGD's 1e-4): above it, a floor may be the
# decay's, and a copy without it is worth its seconds.
USUAL_WEIGHT_DECAY = 0.1


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    if run.evidence.weight_decay <= USUAL_WEIGHT_DECAY:
        return None
    reading = stalled_above_target(run)
    if reading is None:
        return None
    evidence = run.evidence
    outcome = no_weight_decay.check(run)
    if not outcome.memorized:
        return None
    decay = f"{evidence.weight_decay:g}"
    return Diagnosis(
        CODE,
        f"weight_decay {decay} keeps the loss above the target {evidence.target:.4g}:"
        f" {outcome.result()}",
        [
            reading.reason,
            f"the optimizer {evidence.optimizer} has weight_decay {decay}, above the"
            f" usual 0.01 to {USUAL_WEIGHT_DECAY:g}: it pulls the weights toward 0"
            " harder than the batch's loss pulls them away",
        ],
        [
            "lower weight_decay to the usual 0.01 to 0.1 (AdamW) or 1e-4 (SGD)"
            f"  {outcome.mark()}",
            "or run the gate without weight decay, and regularize once it memorizes",
        ],
    )
