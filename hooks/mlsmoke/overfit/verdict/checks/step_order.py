"""``step-scheduler-order``: the project's step function steps the lr scheduler before
the optimizer, so the schedule's first rate is never used (PyTorch warns too, once,
without the line)."""

from __future__ import annotations

from mlsmoke.overfit.training.evidence import STEP_SCHEDULER_ORDER
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = STEP_SCHEDULER_ORDER


def check(run: GateRun) -> list[Warning]:
    return [
        Warning(CODE, f"{finding.message}; {finding.fix}"
                + (f" (fix at {finding.where})" if finding.where else ""))
        for finding in run.evidence.step_findings
        if finding.code == CODE
    ]  # fmt: skip
