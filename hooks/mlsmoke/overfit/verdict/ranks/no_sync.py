"""Accumulation under DDP: of the backward passes of one update, exactly one syncs
the gradients (the others run inside ``model.no_sync()``). Syncing at every micro-step
is N-1 all-reduces too many; never syncing leaves each rank with its own gradient."""

from __future__ import annotations

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "no-sync-misplaced"
UPDATES_READ = 3


def diagnose(ranks: Ranks) -> Diagnosis | None:
    for record in ranks.records:
        updates = list(zip(record.backwards, record.synced_backwards))[:UPDATES_READ]
        for update, (backwards, synced) in enumerate(updates):
            if synced < 0 or backwards < 2 or synced == 1:
                continue  # not DDP's, no accumulation, or right
            how = (
                f"every one of its {backwards} backward passes synced the gradients"
                if synced == backwards
                else f"{synced} of its {backwards} backward passes synced"
            )
            summary = (
                f"update {update + 1} on rank {record.rank}: {how}; exactly one should"
            )
            evidence = [
                f"rank {r.rank}: backward passes per update"
                f" {r.backwards[:UPDATES_READ]}, synced"
                f" {r.synced_backwards[:UPDATES_READ]}"
                for r in ranks.records
            ]
            advice = (
                "run every micro-step but the last inside `with model.no_sync():`,"
                " and the last one outside it"
            )
            return Diagnosis(CODE, summary, evidence, [advice])
    return None
