"""The smallest edit that turns strict mode on (pure: text in, text out).

It amends the script's last top-level ``set`` before the first command (``set -e``
becomes ``set -euo pipefail``), or inserts a ``set`` line after the shebang and the
leading comment block. Every candidate edit is checked by :func:`~.checker.examine`; the
first that passes wins, and a script none of them fixes is left alone. Edits touch one
line, or insert whole
lines where no here-document can be open, so every other byte stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from mlsmoke.strict_mode.checker import Policy, Verdict, examine
from mlsmoke.strict_mode.parser import Statement
from mlsmoke.strict_mode.statements import (
    ERREXIT,
    NOUNSET,
    OPTIONS,
    PIPEFAIL,
    SetEffect,
)

# A word of short options with at least one letter besides `o`: `-e`, `-eo`, `-Eeux`.
_CLUSTER = re.compile(r"-o*[A-Za-np-z][A-Za-z]*")
_LETTERS = ((ERREXIT, "e"), (NOUNSET, "u"))
_REST_OF_LINE = re.compile(r"[ \t]*;?[ \t]*(?:#[^\n]*)?\r?(?:\n|$)")
_COMMENT_OR_BLANK_LINE = re.compile(r"[ \t]*(?:#[^\n]*)?\r?\n")


@dataclass(frozen=True)
class Edit:
    offset: int
    insert: str


def fix(text: str, verdict: Verdict, body_start: int, policy: Policy) -> str | None:
    """``text`` with strict mode turned on; ``text`` itself when it passes already, and
    None when no safe edit makes it pass."""
    if verdict.passed:
        return text
    for edits in _candidates(text, verdict, body_start):
        fixed = apply(text, edits)
        again = examine(fixed, True, verdict.dialect, body_start, policy)
        if again is not None and again.passed:
            return fixed
    return None


def apply(text: str, edits: list[Edit]) -> str:
    pieces, previous = [], 0
    for edit in sorted(edits, key=lambda edit: edit.offset):
        pieces += [text[previous : edit.offset], edit.insert]
        previous = edit.offset
    return "".join(pieces) + text[previous:]


def _candidates(text: str, verdict: Verdict, body_start: int) -> Iterator[list[Edit]]:
    header = verdict.header
    missing = verdict.missing
    needs_ifs = any(p.code == "SM003" for p in verdict.problems)
    if header.sets:
        last = header.sets[-1]
        for amend in (_merge_into_cluster, _append_long_options):
            edits = amend(last, missing) if missing else []
            if edits is not None:
                yield edits + _ifs_edits(text, verdict, last.statement, body_start)
    top = header_insertion_point(text, body_start)
    lines = [_set_line(verdict)] if missing else []
    if needs_ifs:
        lines.append(ifs_line(verdict))
    if lines:
        yield [_insert_lines(text, top, lines)]
        first = header.first_command
        if first is not None and _starts_its_line(text, first):
            yield [_insert_lines(text, _line_start(text, first.start), lines)]


def _merge_into_cluster(
    effect: SetEffect, missing: tuple[str, ...]
) -> list[Edit] | None:
    """``set -e`` -> ``set -euo pipefail``: add letters to the first ``-xyz`` word."""
    cluster = next(
        (w for w in effect.arguments if w.raw == w.value and _CLUSTER.fullmatch(w.raw)),
        None,
    )
    if cluster is None:
        return None
    letters = "".join(letter for name, letter in _LETTERS if name in missing)
    edits = []
    o_index = cluster.raw.find("o")
    if letters:
        at = cluster.end if o_index == -1 else cluster.start + o_index
        edits.append(Edit(at, letters))
    if PIPEFAIL in missing:
        if o_index == -1:
            edits.append(Edit(cluster.end, "o pipefail"))
        else:
            edits.append(Edit(effect.options_end, " -o pipefail"))
    return edits


def _append_long_options(effect: SetEffect, missing: tuple[str, ...]) -> list[Edit]:
    """``set -o errexit`` -> ``set -o errexit -o nounset -o pipefail``."""
    added = "".join(f" -o {name}" for name in OPTIONS if name in missing)
    return [Edit(effect.options_end, added)]


def _set_line(verdict: Verdict) -> str:
    return "set -euo pipefail" if PIPEFAIL in verdict.required else "set -eu"


def ifs_line(verdict: Verdict) -> str:
    if verdict.dialect.has_pipefail:
        return "IFS=$'\\n\\t'"
    return "IFS=\"$(printf '\\n\\t')\""


def _ifs_edits(
    text: str, verdict: Verdict, after: Statement, body_start: int
) -> list[Edit]:
    if not any(p.code == "SM003" for p in verdict.problems):
        return []
    rest_of_line = _REST_OF_LINE.match(text, after.end)
    if _starts_its_line(text, after) and rest_of_line:
        line_end = rest_of_line.end()
        return [_insert_lines(text, line_end, [ifs_line(verdict)])]
    top = header_insertion_point(text, body_start)
    return [_insert_lines(text, top, [ifs_line(verdict)])]


def header_insertion_point(text: str, body_start: int) -> int:
    """Just past the leading comment block (or the shebang line, if none)."""
    point = position = body_start
    while True:
        match = _COMMENT_OR_BLANK_LINE.match(text, position)
        if match is None:
            if text.startswith("#", position) and "\n" not in text[position:]:
                return len(text)  # a last comment line with no newline
            return point
        if text[match.start() : match.end()].strip():
            point = match.end()
        position = match.end()


def _insert_lines(text: str, offset: int, lines: list[str]) -> Edit:
    newline = _newline_before(text, offset)
    block = newline.join(lines)
    if offset == len(text) and text and not text.endswith("\n"):
        return Edit(offset, newline + block)  # keep the missing final newline missing
    return Edit(offset, block + newline)


def _newline_before(text: str, offset: int) -> str:
    end = text.rfind("\n", 0, offset) if offset else -1
    if end == -1:
        end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def _starts_its_line(text: str, statement: Statement) -> bool:
    return not text[_line_start(text, statement.start) : statement.start].strip()


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1
