"""A label field stays as wide as the number of classes: a ``(B, C)`` field of one-hot,
distribution or multi-hot rows (``labels.py``), kept when its width was the same in
every recorded batch and either every column was some sample's class or a field of
class ids stayed within it and matched its rows (``ids``) in every batch."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.mechanisms import class_ids_past_width, label_width_change

KIND = "label_width"
REQUIRED = ("field", "classes")


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        labels = observed.series(name, "label")
        if not observed.everywhere(name) or not labels:
            continue
        widths = {label["width"] for label in labels}
        if len(widths) != 1:
            continue
        width = widths.pop()
        ids = _ids_that_held(observed, name)
        every_column = _marked(labels) == set(range(width))
        if not every_column and not ids:
            continue
        evidence = ["every column a class"] if every_column else []
        evidence += [f"ids of {ids[0]} within it"] if ids else []
        seen = f"{width} wide in {len(labels)} batches, {', '.join(evidence)}"
        entry = {"kind": KIND, "field": name, "classes": width, "from": seen}
        found.append({**entry, "ids": ids[0]} if ids else entry)
    return found


def _marked(labels: list[dict[str, Any]]) -> set[int] | None:
    if any(label["classes"] is None for label in labels):
        return None
    return set().union(*(label["classes"] for label in labels))


def _ids_that_held(observed: Observed, name: str) -> list[str]:
    pairs = [
        r["fields"][1]
        for r in observed.batches[0]["relations"]
        if r["kind"] == "label" and r["fields"][0] == name
    ]
    return sorted(ids for ids in pairs if all(observed.relation("label", [name, ids])))


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, classes = expectation["field"], expectation["classes"]
    for index, figures in observed.figures(name):
        label = figures.get("label")
        if label is not None and label["width"] != classes:
            return [
                Failure(
                    name,
                    KIND,
                    f"{classes} wide (the number of classes)",
                    f"{label['width']} wide",
                    index,
                    mechanism=label_width_change(
                        classes, label["width"], label["classes"]
                    ),
                )
            ]
    ids = expectation.get("ids")
    return _ids_failures(name, ids, classes, observed) if ids else []


def _ids_failures(
    name: str, ids: str, classes: int, observed: Observed
) -> list[Failure]:
    failed = [
        index
        for index, held in enumerate(observed.relation("label", [name, ids]))
        if held is False
    ]
    if not failed:
        return []
    # The batch whose ids went furthest past the width tells the most.
    index = max(failed, key=lambda i: observed.batches[i]["fields"][ids].get("max", 0))
    figures = observed.batches[index]["fields"][ids]
    low, high = figures.get("min", 0), figures.get("max", 0)
    past = high >= classes or low < 0
    return [
        Failure(
            ids,
            KIND,
            f"class ids within {name}'s {classes} columns, marked by its rows",
            f"{low}..{high}" if past else "not marked",
            index,
            figures.get("max_at") if high >= classes else None,
            class_ids_past_width(classes, low, high),
        )
    ]
