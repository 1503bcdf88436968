"""The host waits for the device inside the step (``.item()``, ``.cpu()``,
``.tolist()``, ``nonzero``, printing a CUDA tensor): the device then idles while the
host queues the next kernels.

Threshold: any synchronization at a line of the project's code, in every step
(torch.cuda.set_sync_debug_mode("warn") names the line); the training step itself
needs none.
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.rules import Recommendation

NAME = "sync-in-step"
PER_STEP = 1.0


def check(figures: Figures) -> Recommendation | None:
    gpu = figures.gpu
    if gpu is None:
        return None
    found = [sync for sync in gpu.syncs if sync.per_step >= PER_STEP]
    if not found:
        return None
    lines = "; ".join(
        f"{sync.where} ({sync.code}) {sync.per_step:g}x a step" for sync in found
    )
    gaps = (
        f"; the device sat idle {gpu.idle_seconds * 1e3:.2f} ms a step in"
        f" {gpu.idle_gaps:g} gaps"
        if gpu.idle_gaps
        else ""
    )
    return Recommendation(
        NAME,
        f"the host waits for the device at {lines}{gaps}",
        "keep the value on the device inside the step (accumulate a tensor, log"
        " every N steps), or drop the call",
    )
