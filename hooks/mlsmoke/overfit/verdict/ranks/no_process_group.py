"""A script that never started a process group under torchrun's variables: it has no
distributed branch (or one keyed on something torchrun does not set), so each rank
trained alone and nothing across ranks can be told. The configuration's to fix."""

from __future__ import annotations

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import CONFIG_ERROR, Diagnosis

CODE = CONFIG_ERROR


def diagnose(ranks: Ranks) -> Diagnosis | None:
    settings = ranks.settings
    if settings.script is None or not ranks.records:
        return None
    if any(record.process_group for record in ranks.records):
        return None
    summary = (
        f"{settings.key_path('world-size')}: {settings.script} ran as"
        f" {ranks.world_size} ranks with torchrun's variables (RANK, WORLD_SIZE,"
        " MASTER_ADDR, MASTER_PORT) and never called"
        " torch.distributed.init_process_group: it has no distributed branch to gate;"
        " remove world-size, or start the process group when RANK is set"
    )
    return Diagnosis(CODE, summary)
