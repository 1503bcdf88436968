"""A batch keeps holding several classes: for a label field (one integer per sample,
from a small value set), at least the fewest distinct classes of a recorded batch
divided by the factor, and never fewer than 2. Checked on batches at least as large as
the smallest recorded one: a smaller batch holds fewer classes by chance."""

from __future__ import annotations

import math
from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.observe_limits import MAX_VALUE_SET

KIND = "distinct_classes"
REQUIRED = ("field", "min")


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        shapes, counts = observed.series(name, "shape"), observed.series(
            name, "distinct"
        )
        if (
            not observed.everywhere(name)
            or not counts
            or not observed.series(name, "values")
        ):
            continue
        if any(len(shape) != 1 for shape in shapes) or max(counts) > MAX_VALUE_SET:
            continue
        fewest = min(counts)
        if fewest >= 2:
            found.append(
                {
                    "kind": KIND,
                    "field": name,
                    "batch_size": min(shape[0] for shape in shapes),
                    "min": max(2, math.ceil(fewest / factor)),
                    "from": f"at least {fewest} classes in each of"
                    f" {len(counts)} batches",
                }
            )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, least = expectation["field"], expectation["min"]
    for index, figures in observed.figures(name):
        count = figures.get("distinct")
        large_enough = figures["shape"][0] >= expectation.get("batch_size", least)
        if count is not None and count < least and large_enough:
            mechanism = (
                "shuffling turned off: the batch holds one class (a dataset sorted"
                " by label, read in order)"
                if count == 1
                else "fewer classes per batch: shuffling turned off or a sampler change"
            )
            return [
                Failure(
                    name,
                    KIND,
                    f"at least {least} classes",
                    f"{count}",
                    index,
                    mechanism=mechanism,
                )
            ]
    return []
