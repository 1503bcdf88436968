"""What the check prints: one block per failed expectation, with the recorded and
observed figures, where (batch, sample), the likely mechanism, and how to accept an
intended change."""

from __future__ import annotations

from pathlib import Path

from mlsmoke.expect.kinds.base import Failure


def failure_lines(failure: Failure) -> list[str]:
    where = ""
    if failure.batch is not None:
        where = f" (batch {failure.batch}"
        where += f", sample {failure.sample})" if failure.sample is not None else ")"
    lines = [
        f"  {failure.field}: {failure.kind}: expected {failure.expected};"
        f" observed {failure.observed}{where}"
    ]
    if failure.mechanism:
        lines.append(f"    likely: {failure.mechanism}")
    return lines


def verdict(failures: list[Failure], checked: int, batches: int, suite: Path) -> str:
    if not failures:
        return (
            f"expect: PASS {checked} expectations held on {batches} batches ({suite})"
        )
    lines = [f"expect: FAIL {len(failures)} of {checked} expectations ({suite})"]
    for failure in failures:
        lines += failure_lines(failure)
    lines.append(
        f"  an intended change? mlsmoke expect --record shows the diff and records"
        f" {suite.name} again"
    )
    return "\n".join(lines)
