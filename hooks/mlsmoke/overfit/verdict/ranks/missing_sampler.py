"""Every rank trained on the same batch: the loader does not shard by rank.

The ranks draw their batch under the same seed, so a loader without a
``DistributedSampler`` (a shuffling one included) yields the same batch on every
rank, while one with it yields disjoint shards. Identical batches are the evidence;
the loader's sampler class, when there is one, is named beside them, and in script
mode the script's line that fetched the batch."""

from __future__ import annotations

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "missing-distributed-sampler"


def diagnose(ranks: Ranks) -> Diagnosis | None:
    records = ranks.records
    digests = {r.batch_digest for r in records}
    if len(records) < 2 or len(digests) != 1 or "" in digests:
        return None
    if any(r.sampler == "DistributedSampler" for r in records):
        return None  # a sampler that shards: the data itself repeats
    sampler = records[0].sampler
    drawn = f" (its loader samples with {sampler})" if sampler else ""
    site = records[0].batch_site
    fetched = f", fetched at {site}" if site else ""
    summary = (
        f"all {len(records)} ranks trained on the same batch{drawn}{fetched}: the"
        " batch is not sharded by rank, so each step costs N times what it teaches"
    )
    evidence = [f"rank {r.rank}: batch digest {r.batch_digest}" for r in records]
    return Diagnosis(CODE, summary, evidence, [
        "give the DataLoader sampler=DistributedSampler(dataset) (and call"
        " sampler.set_epoch(epoch) at each epoch)",
        "or have the batch callable read dist.get_rank() and return that rank's shard",
    ])  # fmt: skip
