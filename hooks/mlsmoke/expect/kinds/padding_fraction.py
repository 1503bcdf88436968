"""The share of padding in a mask (its zeros) and of ignored positions (-100) in a
target stays in a band: the recorded shares widened by the factor times their spread,
at least 0.05, clipped to 0..1."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import (
    Failure,
    Observed,
    elements,
    margin,
    rounded,
    shown,
    smaller_sample,
    spread,
)

KIND = "padding_fraction"
REQUIRED = ("field", "of", "min", "max")
MECHANISM = (
    "the padding changed: a tokenizer's max_length or padding strategy, or the"
    " ignore index of the targets"
)

NOTHING_MASKED = (
    "nothing is masked any more: the mask is all ones (padding is attended to, or"
    " padding was turned off)"
)


def _shares(observed: Observed, name: str) -> tuple[str, list[float]] | None:
    masks = observed.series(name, "mask")
    if masks:
        return "mask zeros", [m["zeros"] for m in masks]
    ignored = observed.series(name, "ignored")
    if ignored and any(ignored):
        return "ignore index", ignored
    return None


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        shares = _shares(observed, name) if observed.everywhere(name) else None
        if shares is None:
            continue
        of, values = shares
        width = margin([spread(values)], 0.05, factor)
        found.append(
            {
                "count": min(elements(s) for s in observed.series(name, "shape")),
                "kind": KIND,
                "field": name,
                "of": of,
                "min": rounded(max(0.0, min(values) - width)),
                "max": rounded(min(1.0, max(values) + width)),
                "from": f"{shown(min(values))}..{shown(max(values))}"
                f" in {len(values)} batches",
            }
        )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, low, high = expectation["field"], expectation["min"], expectation["max"]
    for index, figures in observed.figures(name):
        if expectation["of"] == "mask zeros":
            share = figures.get("mask", {}).get("zeros")
        else:
            share = figures.get("ignored")
        wider = smaller_sample(expectation.get("count", 0), elements(figures["shape"]))
        center, half = (low + high) / 2, (high - low) / 2 * wider
        if share is not None and not center - half <= share <= center + half:
            mechanism = MECHANISM
            if share == 0 and expectation["of"] == "mask zeros":
                mechanism = NOTHING_MASKED
            return [
                Failure(
                    name,
                    KIND,
                    f"{expectation['of']} {shown(low)}..{shown(high)}",
                    f"{expectation['of']} {shown(share)}",
                    index,
                    mechanism=mechanism,
                )
            ]
    return []
