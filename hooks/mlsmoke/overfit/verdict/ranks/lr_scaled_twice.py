"""A learning rate scaled by the world size twice: the script's optimizer under N
ranks has N² times the lr it has as one process.

Scaling the lr by N once is the linear scaling rule (N ranks, an N times larger
global batch, gradients averaged by DDP); by √N, the square-root rule. N² is the same
rule applied in two places (a config that scales and a launcher that scales again).
Compared where the project's own code builds the optimizer: the script (script
mode), or the optimizer callable (factory mode), which rank 0 calls again in its
world of one. Other ratios are left alone."""

from __future__ import annotations

import math

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "lr-scaled-twice"


def diagnose(ranks: Ranks) -> Diagnosis | None:
    record = next((r for r in ranks.records if r.rank == 0), None)
    n = ranks.world_size
    if record is None or n < 2 or not record.lr_alone or not record.lr_ranked:
        return None
    if not math.isclose(record.lr_ranked, n * n * record.lr_alone, rel_tol=1e-6):
        return None
    where = f" (built at {record.lr_site})" if record.lr_site else ""
    summary = (
        f"the optimizer's lr under {n} ranks is {record.lr_ranked:g}, {n * n} times"
        f" its {record.lr_alone:g} as one process{where}: the lr is scaled by the"
        f" world size twice"
    )
    evidence = [
        f"lr as one process: {record.lr_alone:g}",
        f"lr under {n} ranks: {record.lr_ranked:g} = {record.lr_alone:g} × {n}²",
    ]
    return Diagnosis(CODE, summary, evidence, [
        "scale the lr by the world size in one place only (the linear scaling rule:"
        " lr × N for an N times larger global batch), or not at all",
    ])  # fmt: skip
