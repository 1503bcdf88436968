"""``--record`` on an existing suite: the new inference, except where a reviewer edited
an expectation by hand (its content no longer matches its digest), and the lines of
the diff that says what changed."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.suite_file import edited_by_hand, identity


def merge(
    old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The merged expectations, and the diff lines (empty: nothing changed)."""
    before = {identity(e): e for e in old}
    after = {identity(e): e for e in new}
    merged, lines = [], []
    for key in sorted(set(before) | set(after)):
        was, now = before.get(key), after.get(key)
        if was is not None and edited_by_hand(was):
            merged.append(was)
            lines.append(f"= {_label(was)}: kept, edited by hand")
        elif now is None:
            lines.append(f"- {_label(was)}: {_summary(was)}")  # type: ignore[arg-type]
        elif was is None:
            merged.append(now)
            lines.append(f"+ {_label(now)}: {_summary(now)}")
        else:
            merged.append(now)
            if _summary(was) != _summary(now):
                lines.append(f"~ {_label(now)}: {_summary(was)} -> {_summary(now)}")
    return merged, lines


def _label(expectation: dict[str, Any]) -> str:
    return f"{expectation['field']} {expectation['kind']}"


def _summary(expectation: dict[str, Any]) -> str:
    skipped = ("kind", "field", "from", "digest")
    parts = [f"{k}={v}" for k, v in sorted(expectation.items()) if k not in skipped]
    return " ".join(parts) or "held"
