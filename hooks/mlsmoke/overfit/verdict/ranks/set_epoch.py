"""A sharding sampler that gives the same order at every epoch: the project's code
drives the epochs and never calls ``sampler.set_epoch(epoch)`` (or calls it with the
same value), so every epoch repeats the first one's order on every rank.

Known only where the project's own code iterates a second epoch (script mode, or a
loader object that drives its own epochs in factory mode: ``training/ranks/
epoch_order.py``, ``loader_epochs.py``); a plain DataLoader the gate iterates itself
is never told an epoch, and is not judged."""

from __future__ import annotations

from mlsmoke.overfit.verdict.ranks.ends import Ranks
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "set-epoch-missing"


def diagnose(ranks: Ranks) -> Diagnosis | None:
    for record in ranks.records:
        orders = record.epoch_orders
        if len(orders) < 2 or not orders[0] or orders[0] != orders[1]:
            continue
        where = record.epoch_sites[1] if len(record.epoch_sites) > 1 else ""
        summary = (
            f"the {record.epoch_sampler} gave rank {record.rank} the same order in"
            " its first two epochs: nothing called sampler.set_epoch(epoch) before"
            " the second" + (f" (iterated at {where})" if where else "")
        )
        evidence = [
            f"rank {r.rank}: epoch 1 starts {_head(r.epoch_orders[0])}, epoch 2"
            f" starts {_head(r.epoch_orders[1])}"
            for r in ranks.records
            if len(r.epoch_orders) >= 2
        ]
        return Diagnosis(CODE, summary, evidence, [
            "call sampler.set_epoch(epoch) at the start of each epoch, before"
            " iterating the loader: the sampler shuffles with seed + epoch",
        ])  # fmt: skip
    return None


def _head(order: list[int]) -> str:
    return "[" + ", ".join(map(str, order[:6])) + (", ...]" if len(order) > 6 else "]")
