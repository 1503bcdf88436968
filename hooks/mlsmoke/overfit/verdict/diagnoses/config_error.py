"""``config-error``: the run stopped on a key of [tool.mlsmoke.overfit]."""

from __future__ import annotations

from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import CONFIG_ERROR, Diagnosis


@diagnoser(CONFIG_ERROR)
def diagnose(run: GateRun) -> Diagnosis | None:
    key = run.evidence.config_key
    if key is None:
        return None
    return Diagnosis(
        CONFIG_ERROR, f"{run.settings.key_path(key)}: {run.evidence.error}"
    )
