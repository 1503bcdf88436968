"""``batch-not-moved``: off the CPU, an object in the batch that the gate can neither
rebuild nor move (it has no ``.to(device)``) stays where the batch callable put it.
The model then meets tensors on another device; the warning says which object, and
why it stayed."""

from __future__ import annotations

from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "batch-not-moved"


def check(run: GateRun) -> list[Warning]:
    return [Warning(CODE, line) for line in run.evidence.batch_not_moved]
