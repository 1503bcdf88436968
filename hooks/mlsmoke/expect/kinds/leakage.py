"""No sample of the validation batches also appears in the training batches (by a
content hash of each sample): kept when the recorded ones shared none."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import BATCH, Failure, Observed

KIND = "leakage"
REQUIRED = ("field",)
MECHANISM = (
    "validation samples leak into the training split (a split made after shuffling"
    " with another seed, overlapping index ranges, or one list used for both)"
)


def _validation_samples(observed: Observed) -> set[str]:
    return {s for batch in observed.validation for s in batch["samples"]}


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    held_out = _validation_samples(observed)
    if not held_out:
        return []
    trained = [s for batch in observed.batches for s in batch["samples"]]
    if held_out & set(trained):
        return []
    return [
        {
            "kind": KIND,
            "field": BATCH,
            "from": f"0 of {len(held_out)} validation samples among {len(trained)}"
            " training samples",
        }
    ]


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    held_out = _validation_samples(observed)
    leaked = 0
    first: tuple[int, int] | None = None
    for index, batch in enumerate(observed.batches):
        for sample, digest in enumerate(batch["samples"]):
            if digest in held_out:
                leaked += 1
                first = first or (index, sample)
    if first is None:
        return []
    return [
        Failure(
            BATCH,
            KIND,
            "no validation sample in training",
            f"{leaked} training samples are validation samples",
            first[0],
            first[1],
            MECHANISM,
        )
    ]
