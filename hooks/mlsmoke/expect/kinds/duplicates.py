"""Few samples of a batch are copies of another: at most the largest recorded share
of duplicates times the factor, and at least a quarter of the batch is tolerated."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import BATCH, Failure, Observed, rounded, shown

KIND = "duplicates"
REQUIRED = ("field", "max")
FLOOR = 0.25
MECHANISM = (
    "the same samples repeat within a batch: an index that does not advance,"
    " or a sampler drawing with replacement"
)


def duplicate_share(samples: list[str]) -> float:
    return 1 - len(set(samples)) / len(samples) if samples else 0.0


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    shares = [duplicate_share(b["samples"]) for b in observed.batches if b["samples"]]
    if not shares:
        return []
    return [
        {
            "kind": KIND,
            "field": BATCH,
            "max": rounded(min(1.0, max(max(shares) * factor, FLOOR))),
            "from": f"at most {shown(max(shares))} duplicated in {len(shares)}"
            " batches",
        }
    ]


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    for index, batch in enumerate(observed.batches):
        share = duplicate_share(batch["samples"])
        if share > expectation["max"]:
            first = _first_repeat(batch["samples"])
            return [
                Failure(
                    BATCH,
                    KIND,
                    f"at most {shown(expectation['max'])} duplicated",
                    f"{shown(share)} duplicated",
                    index,
                    first,
                    MECHANISM,
                )
            ]
    return []


def _first_repeat(samples: list[str]) -> int | None:
    seen = set()
    for index, sample in enumerate(samples):
        if sample in seen:
            return index
        seen.add(sample)
    return None
