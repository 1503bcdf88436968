"""A mask's zeros stay on the side of each row they were recorded on (a tokenizer's
``padding_side``): kept when every recorded batch with padding had it on one side."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed

KIND = "padding_side"
REQUIRED = ("field", "side")
SIDES = ("left", "right")


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        masks = observed.series(name, "mask")
        sides = {m["side"] for m in masks} - {"none"}
        if len(sides) == 1 and sides <= set(SIDES):
            side = sides.pop()
            padded = sum(m["side"] == side for m in masks)
            found.append(
                {
                    "kind": KIND,
                    "field": name,
                    "side": side,
                    "from": f"{side} in {padded} padded batches",
                }
            )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, side = expectation["field"], expectation["side"]
    for index, figures in observed.figures(name):
        seen = figures.get("mask", {}).get("side")
        if seen is not None and seen not in (side, "none"):
            mechanism = (
                f"the tokenizer's padding side changed ({side} -> {seen})"
                if seen in SIDES
                else "padding on both sides: the mask is no longer a padding mask"
            )
            return [
                Failure(
                    name,
                    KIND,
                    f"padding on the {side}",
                    seen,
                    index,
                    mechanism=mechanism,
                )
            ]
    return []
