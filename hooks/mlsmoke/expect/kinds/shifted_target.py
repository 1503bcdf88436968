"""A language model's target stays its input moved one position (``y[:, t] ==
x[:, t + 1]``), or equal to it where the shift happens in the model (Hugging Face
``labels``): kept when it held in every recorded batch."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed

KIND = "shifted_target"
REQUIRED = ("field", "input", "relation")
RELATIONS = {"shifted": "shift", "equal": "equal"}


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for relation in observed.batches[0]["relations"] if observed.batches else []:
        if relation["kind"] not in ("shift", "equal"):
            continue
        held = observed.relation(relation["kind"], relation["fields"])
        if all(held):
            source, target = relation["fields"]
            name = "shifted" if relation["kind"] == "shift" else "equal"
            found.append(
                {
                    "kind": KIND,
                    "field": target,
                    "input": source,
                    "relation": name,
                    "from": f"{name} in {len(held)} of {len(held)} batches",
                }
            )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    target, source = expectation["field"], expectation["input"]
    relation = expectation["relation"]
    pair = [source, target] if relation == "shifted" else sorted([source, target])
    held = observed.relation(RELATIONS[relation], pair)
    for index, holds in enumerate(held):
        if holds:
            continue
        return [
            Failure(
                target,
                KIND,
                f"{relation} to {source}",
                _what_holds(observed, index, source, target),
                index,
                mechanism=_mechanism(relation, observed, index, source, target),
            )
        ]
    return []


def _equal(observed: Observed, index: int, source: str, target: str) -> bool:
    return bool(observed.relation("equal", sorted([source, target]))[index])


def _what_holds(observed: Observed, index: int, source: str, target: str) -> str:
    if _equal(observed, index, source, target):
        return f"equal to {source}"
    if observed.relation("shift", [source, target])[index]:
        return f"shifted to {source}"
    return f"neither equal nor shifted to {source}"


def _mechanism(
    relation: str, observed: Observed, index: int, source: str, target: str
) -> str:
    if relation == "shifted" and _equal(observed, index, source, target):
        return (
            "the shift was lost: the target equals the input (the model is asked"
            " to copy it)"
        )
    if relation == "equal" and observed.relation("shift", [source, target])[index]:
        return "the target is now shifted in the data; the model shifts it again"
    return "the target is no longer built from the input (an offset or slice changed)"
