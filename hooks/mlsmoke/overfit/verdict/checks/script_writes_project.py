"""``script-writes-project``: the training script wrote files inside the project while
the gate ran it (a checkpoint, a log, a config dump). Every commit's gate run writes
them again into the working tree; the script's output setting, given the gate's
``{out_dir}`` in ``args``, sends them to a directory the gate removes."""

from __future__ import annotations

from mlsmoke.listing import first_few
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "script-writes-project"
SHOWN = 4


def check(run: GateRun) -> list[Warning]:
    evidence = run.evidence
    written = evidence.project_writes
    if not evidence.script or not written:
        return []
    listed = first_few(written, SHOWN)
    return [
        Warning(
            CODE,
            f"{evidence.script} wrote {len(written)} file"
            f"{'s' if len(written) > 1 else ''} inside the project while the gate"
            f" ran it: {listed}; every gate run writes them again. Set its output"
            " directory to {out_dir} in args of [tool.mlsmoke.overfit]: the gate"
            " gives it a directory of its own and removes it",
        )
    ]
