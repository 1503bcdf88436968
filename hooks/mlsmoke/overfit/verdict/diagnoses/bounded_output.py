"""``not-learning`` from a bounded output: the loss levels off above the target, the
model's output is a squashing module's (sigmoid, tanh, hardtanh) or a squashing
call's in forward (``torch.sigmoid(x)``, ``F.softmax``), the targets lie outside
its range, and the same run with that module removed (or that call returning its
input) memorizes. No step
budget or learning rate gets a squashed output to a value it cannot take. Asked
before the lr range test, which it spares."""

from __future__ import annotations

from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.diagnoses._stalled import stalled_above_target
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import unbounded_output, unsquashed_call
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "not-learning"


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    reading = stalled_above_target(run)
    if reading is None:
        return None
    found = unbounded_output.find(run) or unsquashed_call.find(run)
    if found is None:
        return None
    intervention = unbounded_output if found.call is None else unsquashed_call
    outcome = intervention.check(run, found)
    if not outcome.memorized:
        return None
    where = f"{found.kind} ({found.module})"
    return Diagnosis(
        CODE,
        f"the output passes through {where}, whose values lie in [{found.low:g},"
        f" {found.high:g}], and the targets in batch field {found.field} reach"
        f" {found.lowest:.4g} to {found.highest:.4g}: {outcome.result()}",
        [
            reading.reason,
            f"the model's output is the output of {where}: it cannot leave"
            f" [{found.low:g}, {found.high:g}]",
            f"batch field {found.field} (the output's size) holds values from"
            f" {found.lowest:.4g} to {found.highest:.4g}",
        ],
        [
            f"remove the {found.kind} from the output of a regression, or scale the"
            f" targets into [{found.low:g}, {found.high:g}]  {outcome.mark()}",
            "a probability output (sigmoid) belongs with targets in [0, 1] and a loss"
            " such as binary_cross_entropy_with_logits on the raw output",
        ],
    )
