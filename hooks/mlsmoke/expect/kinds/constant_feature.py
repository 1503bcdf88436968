"""A float feature that varied in every recorded batch does not become constant: a
column of a table, a channel of an image, or the whole field. It fails only when the
feature is constant in every batch read, so one unlucky batch never does. A label
field's columns are classes, not features: a class no small batch drew is chance."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed

KIND = "constant_feature"
REQUIRED = ("field", "varying")
MECHANISM = (
    "a feature left constant: a column filled with one value (a default, a fillna,"
    " a bad join)"
)


def _stds(figures: dict[str, Any]) -> list[float] | None:
    channels = figures.get("channels")
    if channels:
        return channels["std"]
    return [figures["std"]] if "std" in figures else None


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        per_batch = [_stds(f) for _, f in observed.figures(name)]
        if not observed.everywhere(name) or not per_batch or None in per_batch:
            continue
        if observed.is_label_field(name):  # a class absent from small batches
            continue
        if len({len(s) for s in per_batch}) != 1:  # type: ignore[arg-type]
            continue
        varying = [i for i, column in enumerate(zip(*per_batch)) if min(column) > 0]
        if varying:
            found.append(
                {
                    "kind": KIND,
                    "field": name,
                    "varying": varying,
                    "from": f"{len(varying)} of {len(per_batch[0])} varied in"
                    f" every batch",
                }
            )  # type: ignore[arg-type]
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name = expectation["field"]
    per_batch = [_stds(f) for _, f in observed.figures(name)]
    if not per_batch or None in per_batch:
        return []
    constant = [
        index
        for index in expectation["varying"]
        if all(index < len(s) and s[index] == 0 for s in per_batch)  # type: ignore
    ]
    if not constant:
        return []
    width = len(per_batch[0])  # type: ignore[arg-type]
    what = "the field" if width == 1 else f"column {constant[0]}"
    more = f" (and {len(constant) - 1} more)" if len(constant) > 1 else ""
    return [
        Failure(
            name,
            KIND,
            f"{what} varies",
            f"{what}{more} constant in every batch",
            mechanism=MECHANISM,
        )
    ]
