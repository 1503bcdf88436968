"""One change made to several fields at once: images and their noise target both
channels-last, where permuting either alone leaves the other in the wrong layout and
the step still fails. Tried after every single repair failed."""

from __future__ import annotations

import dataclasses

from mlsmoke.overfit.verdict.repairs.repair import Repair, spelled


def together(failed: list[Repair]) -> list[Repair]:
    """For each change that failed on two or more fields, one repair making it on
    all of them; the changes that name the data's meaning (hypotheses) are left
    alone."""
    by_change: dict[tuple[str, str], list[Repair]] = {}
    for repair in failed:
        if repair.is_hypothesis or repair.together:
            continue
        pattern = repair.written.replace(spelled(repair.field), "{}")
        by_change.setdefault((repair.topic, pattern), []).append(repair)
    return [
        dataclasses.replace(
            first,
            written=" and ".join(r.written for r in (first, *rest)),
            together=tuple(rest),
        )
        for first, *rest in by_change.values()
        if rest
    ]
