"""The step waits for data, and the loader has no worker processes or too few.

Threshold: the TensorBoard profiler plugin's, a data wait above 5% of the step, and
at least 1 ms a step: a batch handed over by a worker process costs a few hundred µs
itself, so a worker cannot win back less. Silent when the loader already has a worker
for every CPU but the one the training process needs: more workers would take the
step's own CPU (2 workers on 2 busy CPUs made the template project's data wait
longer, not shorter).
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.phases import DATA_WAIT
from mlsmoke.profile.rules import Recommendation, percent

NAME = "data-workers"
DATA_SHARE = 0.05
DATA_SECONDS = 1e-3
MAX_SUGGESTED = 8


def check(figures: Figures) -> Recommendation | None:
    share = figures.share(DATA_WAIT)
    loader = figures.loader
    wait = figures.split.get(DATA_WAIT, 0.0)
    if share <= DATA_SHARE or wait < DATA_SECONDS:
        return None
    measured = (
        f"the step waits {wait * 1e3:.1f} ms for data: {percent(share)} of it"
        f" (thresholds {percent(DATA_SHARE)} and {DATA_SECONDS * 1e3:g} ms)"
    )
    spare = max(loader.cpu_count - 1, 1)
    suggested = min(spare, MAX_SUGGESTED)
    if loader.num_workers is None:
        return Recommendation(
            NAME,
            measured + f"; the batches come from a {loader.kind} ({loader.where}),"
            " made in the training process",
            f"return a torch.utils.data.DataLoader(..., num_workers={suggested})"
            f" from {loader.where}, so that batches are made while the step runs",
        )
    if loader.num_workers >= spare:
        return None
    return Recommendation(
        NAME,
        measured + f", with num_workers={loader.num_workers} on"
        f" {loader.cpu_count} CPUs",
        f"DataLoader(num_workers={suggested}, persistent_workers=True) in"
        f" {loader.where}",
    )
