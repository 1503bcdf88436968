"""A field recorded in every batch is still there (a new, unrecorded field is reported
by the check itself: ``check.py``)."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed

KIND = "presence"
REQUIRED = ("field",)


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    count = len(observed.batches)
    return [
        {"kind": KIND, "field": name, "from": f"in {count} of {count} batches"}
        for name in observed.field_names()
        if observed.everywhere(name)
    ]


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name = expectation["field"]
    for index, batch in enumerate(observed.batches):
        if name not in batch["fields"]:
            return [
                Failure(
                    name, KIND, "present", "gone: recorded, not in the batch", index
                )
            ]
    return []
