"""Batches are copied to a CUDA device from pageable memory: each copy goes
through a staging buffer and blocks the host; pinned memory makes it asynchronous.

Threshold: copies from pageable memory take at least 2% of the step, and the loader's
``pin_memory`` is off (or there is no DataLoader to set it on).
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.rules import Recommendation, percent

NAME = "pin-memory"
PAGEABLE_SHARE = 0.02


def check(figures: Figures) -> Recommendation | None:
    gpu, loader = figures.gpu, figures.loader
    if gpu is None or loader.pin_memory or figures.step_seconds <= 0:
        return None
    share = gpu.pageable_h2d_seconds / figures.step_seconds
    if share < PAGEABLE_SHARE:
        return None
    measured = (
        f"host-to-device copies from pageable memory take"
        f" {gpu.pageable_h2d_seconds * 1e3:.2f} ms a step, {percent(share)} of it"
        f" (threshold {percent(PAGEABLE_SHARE)}), with pin_memory off"
    )
    if loader.num_workers is None:
        change = (
            f"pin the batch in {loader.where} (tensor.pin_memory()), or return a"
            " DataLoader(..., pin_memory=True); copy with .to(device,"
            " non_blocking=True)"
        )
    else:
        change = (
            f"DataLoader(..., pin_memory=True) in {loader.where}, and copy with"
            " .to(device, non_blocking=True)"
        )
    return Recommendation(NAME, measured, change)
