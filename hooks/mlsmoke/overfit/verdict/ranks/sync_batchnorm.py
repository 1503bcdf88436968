"""BatchNorm that normalizes over each rank's batch alone, when that batch is small:
its statistics are noisier than the global batch's. A warning, not a failure."""

from __future__ import annotations

from mlsmoke.listing import first_few
from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Warning

CODE = "sync-batchnorm"
SMALL_BATCH = 16  # per rank: below this, BatchNorm's statistics are noisy


def warn(ranks: Ranks) -> list[Warning]:
    record = ranks.records[0] if ranks.records else None
    if record is None or not record.batchnorm or not record.batch_size:
        return []
    if record.batch_size >= SMALL_BATCH:
        return []
    modules = first_few(record.batchnorm, 4)
    return [
        Warning(
            CODE,
            f"BatchNorm ({modules}) normalizes over {record.batch_size} samples"
            f" per rank; torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)"
            f" normalizes over all {ranks.world_size} ranks' samples (on GPUs)",
        )
    ]
