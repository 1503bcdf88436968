"""A float field that was finite in every recorded batch has no NaN or infinity."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed

KIND = "finite"
REQUIRED = ("field",)
MECHANISM = (
    "a transform makes NaN or inf (an augmentation, a division by a zero std,"
    " a log of 0, an empty mean)"
)


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        counts = observed.series(name, "nonfinite")
        if observed.everywhere(name) and counts and not any(counts):
            found.append(
                {
                    "kind": KIND,
                    "field": name,
                    "from": f"no NaN or inf in {len(counts)} batches",
                }
            )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name = expectation["field"]
    for index, figures in observed.figures(name):
        if figures.get("nonfinite"):
            text = f"{figures['nonfinite']} NaN or inf values"
            return [
                Failure(
                    name,
                    KIND,
                    "finite values",
                    text,
                    index,
                    figures.get("nonfinite_at"),
                    MECHANISM,
                )
            ]
    return []
