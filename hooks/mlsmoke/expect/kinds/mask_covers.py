"""A mask is 0 exactly where another field holds its padding value: kept when that
held in every recorded batch that had padding."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed

KIND = "mask_covers"
REQUIRED = ("field", "of")
MECHANISM = (
    "the mask and the padding disagree: a collate, tokenizer or pad id change"
    " (the model attends to padding, or ignores real tokens)"
)


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for batch in observed.batches[:1]:
        for relation in batch["relations"]:
            if relation["kind"] != "mask":
                continue
            held = observed.relation("mask", relation["fields"])
            evidence = [h for h in held if h is not None]
            if evidence and all(evidence):
                mask, of = relation["fields"]
                found.append(
                    {
                        "kind": KIND,
                        "field": mask,
                        "of": of,
                        "from": f"held in {len(evidence)} padded batches",
                    }
                )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    mask, of = expectation["field"], expectation["of"]
    for index, held in enumerate(observed.relation("mask", [mask, of])):
        if held is False:
            return [
                Failure(
                    mask,
                    KIND,
                    f"0 exactly at the padding of {of}",
                    "covers other positions",
                    index,
                    mechanism=MECHANISM,
                )
            ]
    return []
