"""The verdict of a distributed gate, from every rank's end and record.

A rank that never reported (``rank_failed``) or that waited in vain in a collective
(``collective_mismatch``) decides the verdict first. Then the registry of checks over
the records, plain values only: each module has ``CODE`` and ``diagnose(ranks)``
(a Diagnosis that fails the gate, even one that memorized) or ``warn(ranks)``
(warnings). A new check is a new module here plus a line in a registry. The rest of
the verdict is rank 0's single-process one, from a world of one.
"""

from __future__ import annotations

from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.ranks import (
    collective_mismatch,
    gradient_mean,
    lr_scaled_twice,
    missing_sampler,
    no_process_group,
    no_sync,
    params_in_sync,
    rank_failed,
    set_epoch,
    sync_batchnorm,
    unused_parameters,
)
from mlsmoke.overfit.verdict.ranks.ends import RankEnd, Ranks, curves_note
from mlsmoke.overfit.verdict.result import CONFIG_ERROR, Diagnosis, Result

__all__ = ["RankEnd", "config_error", "judge_ranks", "too_few_gpus"]

FAULTS = [
    collective_mismatch.diagnose,
    rank_failed.diagnose,
    no_process_group.diagnose,
]
DIAGNOSERS = [
    unused_parameters.diagnose,
    gradient_mean.diagnose,  # the cause of parameters that drift apart
    params_in_sync.diagnose,
    lr_scaled_twice.diagnose,
    no_sync.diagnose,
    missing_sampler.diagnose,
    set_epoch.diagnose,
]
WARNERS = [sync_batchnorm.warn]
CODES = [rank_failed.CODE, collective_mismatch.CODE, unused_parameters.CODE,
         params_in_sync.CODE, gradient_mean.CODE, no_sync.CODE, missing_sampler.CODE,
         set_epoch.CODE, lr_scaled_twice.CODE, sync_batchnorm.CODE]  # fmt: skip


def judge_ranks(settings: GateSettings, ends: list[RankEnd]) -> Result:
    ranks = Ranks(settings, ends)
    for fault in FAULTS:
        found = fault(ranks)
        if found is not None:
            return Result(settings.name, found, losses=ranks.losses(0))
    result = ranks.rank_zero_result()
    for diagnoser in DIAGNOSERS:
        found = diagnoser(ranks)
        if found is not None:
            found.evidence.append(
                f"rank 0's single-process verdict: {result.diagnosis.code}"
            )
            result.diagnosis = found
            break
    for warner in WARNERS:
        result.warnings += warner(ranks)
    result.notes.insert(0, curves_note(ranks))
    result.rank_losses = [record.losses for record in ranks.records]
    return result


def too_few_gpus(settings: GateSettings, visible: int) -> Result | None:
    """A config error for NCCL ranks without a GPU each."""
    if visible >= settings.world_size:
        return None
    summary = (
        f"{settings.key_path('world-size')}: {settings.world_size} ranks on CUDA"
        f" need a GPU each (NCCL), and {visible} GPU(s) are visible"
        f" (CUDA_VISIBLE_DEVICES={_visible_devices()}); lower world-size, or set"
        ' device = "cpu" to run the ranks on gloo'
    )
    return config_error(settings, summary)


def config_error(settings: GateSettings, summary: str) -> Result:
    return Result(settings.name, Diagnosis(CONFIG_ERROR, summary))


def _visible_devices() -> str:
    import os

    return os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
