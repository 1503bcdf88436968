"""Example identity: an index and a content hash. A suite refers to the examples it
was recorded on; when the dataset at those indices holds other content (edited,
regenerated, reordered on disk), comparing would compare different examples, so the
check stops and says which suite, which index, and where that content went."""

from __future__ import annotations

import hashlib

from mlsmoke.errors import MlsmokeError
from mlsmoke.suites.records import Evaluation, taker
from mlsmoke.suites.suite_file import WHOLE_SET, SuiteFile

SHOWN = 3  # changed examples named in the message


class DatasetChanged(MlsmokeError):
    """The suites no longer refer to the same examples."""


def fingerprint(hashes: list[str]) -> str:
    """One digest of every example's content hash, in dataset order."""
    return hashlib.sha256("\n".join(hashes).encode()).hexdigest()


def verify(suites: list[SuiteFile], evaluation: Evaluation) -> None:
    """DatasetChanged when a suite's examples are not where, or what, they were."""
    now = evaluation.hashes
    for suite in suites:
        if suite.name == WHOLE_SET:
            continue
        indices, hashes = suite.indices, suite.columns["hash"]
        if _in_place(indices, hashes, now):
            continue
        changed = [
            (index, digest)
            for index, digest in zip(indices, hashes)
            if not 0 <= index < len(now) or now[index] != digest
        ]
        if changed:
            raise DatasetChanged(_message(suite, changed, now))
    whole = next((s for s in suites if s.name == WHOLE_SET), None)
    if whole is not None and whole.recorded.get("fingerprint") != fingerprint(now):
        size = whole.recorded.get("size")
        raise DatasetChanged(
            f'{whole.path}: suite {WHOLE_SET!r}, key "fingerprint": the dataset\'s'
            f" content changed since the record ({size} examples then, {len(now)}"
            " now); the whole-set baseline no longer applies: record the suites"
            " again (mlsmoke suites record) if the change is meant"
        )


def _in_place(indices: list[int], hashes: list[str], now: list[str]) -> bool:
    """Whether every recorded hash is still at its index (a list compared at once)."""
    if indices and not 0 <= min(indices) <= max(indices) < len(now):
        return False
    return taker(indices)(now) == hashes


def _message(
    suite: SuiteFile,
    changed: list[tuple[int, str]],
    now: list[str],
) -> str:
    where_now: dict[str, int] = {}
    for index, digest in enumerate(now):
        where_now.setdefault(digest, index)
    moved = [(i, where_now[h]) for i, h in changed if h in where_now]
    details = []
    for index, digest in changed[:SHOWN]:
        if not 0 <= index < len(now):
            details.append(f"#{index} is past the dataset's end ({len(now)} examples)")
        elif digest in where_now:
            details.append(f"#{index}'s content is now at #{where_now[digest]}")
        else:
            details.append(
                f"#{index}'s content hash was {digest[:12]}, is {now[index][:12]}"
            )
    cause = (
        "the dataset was reordered"
        if len(moved) == len(changed)
        else "the dataset's content changed"
    )
    return (
        f'{suite.path}: suite {suite.name!r}, key "hash": {len(changed)} of its'
        f" {len(suite)} examples are not what was recorded ({cause}):"
        f" {'; '.join(details)}. The suite no longer refers to the same examples:"
        " restore the dataset's order and content, or record the suites again"
        " (mlsmoke suites record) if the change is meant"
    )
