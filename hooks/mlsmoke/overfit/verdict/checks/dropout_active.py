"""``dropout-active``: dropout makes memorization slower than it needs to be; turn it
off while debugging (Karpathy's recipe)."""

from __future__ import annotations

from mlsmoke.listing import first_few
from mlsmoke.overfit.verdict import script_dropout
from mlsmoke.overfit.verdict.dropout import active_dropout
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "dropout-active"
SHOWN = 4


def check(run: GateRun) -> list[Warning]:
    active = [f"{name} (p={p:g})" for name, p in active_dropout(run.evidence)]
    if not active:
        return []
    listed = first_few(active, SHOWN)
    return [
        Warning(
            CODE,
            f"{len(active)} dropout module{'s' if len(active) > 1 else ''} active"
            f" while the gate trains: {listed}; dropout slows memorization, "
            + (
                _script_advice(run, run.evidence.script)
                if run.evidence.script
                else "so build the gate's model with dropout 0"
            ),
        )
    ]


def _script_advice(run: GateRun, script: str) -> str:
    try:
        model = run.trained_model() if run.trained_model else None
    except Exception:  # the script's model could not be found: no config to name
        model = None
    return script_dropout.advice(script, model)
