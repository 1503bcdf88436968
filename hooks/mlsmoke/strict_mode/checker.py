"""The decision: are errexit, nounset and pipefail on before the script's first command?

Pure: it takes text and returns a :class:`Verdict`. It reads statements lazily and stops
at the first real command (or, when options are missing, at the ``set`` that comes too
late), so callers can feed it a prefix of the file and read more only on demand.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from mlsmoke.strict_mode import pragma
from mlsmoke.strict_mode.words import NeedMore
from mlsmoke.strict_mode.parser import Parser, Statement
from mlsmoke.strict_mode.shebang import BOM, Dialect
from mlsmoke.strict_mode.statements import (
    ERREXIT,
    NOUNSET,
    OPTIONS,
    PIPEFAIL,
    SetEffect,
    assigns_ifs,
    prepares_only,
    set_effect,
)

MISSING, TOO_LATE, NO_IFS = "SM001", "SM002", "SM003"
_SET_WORD = re.compile(r"\bset\b")


@dataclass(frozen=True)
class Policy:
    require_ifs: bool = False
    require_pipefail_in_sh: bool = False

    def required(self, dialect: Dialect) -> tuple[str, ...]:
        if dialect.has_pipefail or self.require_pipefail_in_sh:
            return OPTIONS
        return (ERREXIT, NOUNSET)


@dataclass(frozen=True)
class Problem:
    code: str
    offset: int
    message: str


@dataclass(frozen=True)
class Header:
    """What the script does before its first real command."""

    sets: tuple[SetEffect, ...] = ()
    enabled: frozenset[str] = frozenset()
    has_ifs: bool = False
    first_command: Statement | None = None
    nested_set: Statement | None = None  # a `set` that does not count for the script
    late_set: Statement | None = None
    disabled: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Verdict:
    dialect: Dialect
    required: tuple[str, ...]
    header: Header
    problems: tuple[Problem, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(o for o in self.required if o not in self.header.enabled)


def examine(
    text: str, at_eof: bool, dialect: Dialect, body_start: int, policy: Policy
) -> Verdict | None:
    """The verdict on ``text`` (the file, or a prefix of it when not ``at_eof``).

    None when the prefix is too short to decide; ``body_start`` is the offset just past
    the shebang line.
    """
    required = policy.required(dialect)
    parser = Parser(text, at_eof, body_start)
    try:
        header = _read_header(parser, required)
    except NeedMore:
        return None
    comments = parser.lexer.comments
    end = header.first_command.start if header.first_command else len(text)
    disabled = frozenset().union(
        *(pragma.disabled_codes(text[a:b]) for a, b in comments if a < end)
    )
    header = dataclasses.replace(header, disabled=disabled)
    verdict = Verdict(dialect, required, header)
    if pragma.ALL in disabled:
        return verdict
    problems = sorted(_problems(text, verdict, policy), key=lambda p: p.offset)
    return Verdict(
        dialect, required, header, tuple(p for p in problems if p.code not in disabled)
    )


def _read_header(parser: Parser, required: tuple[str, ...]) -> Header:
    enabled: set[str] = set()
    sets: list[SetEffect] = []
    has_ifs = False
    nested_set: Statement | None = None
    statements = parser.statements()
    for statement in statements:
        effect = set_effect(statement)
        if statement.depth or statement.conditional or statement.subshell:
            if effect and effect.turned_on and nested_set is None:
                nested_set = statement
            if statement.depth:
                continue
        elif effect is not None:
            enabled = (enabled | effect.turned_on) - effect.turned_off
            sets.append(effect)
            continue
        has_ifs = has_ifs or assigns_ifs(statement)
        if prepares_only(statement):
            continue
        missing = set(required) - enabled
        late = _late_set(statements, missing) if _may_follow(parser, missing) else None
        return Header(
            tuple(sets), frozenset(enabled), has_ifs, statement, nested_set, late
        )
    return Header(tuple(sets), frozenset(enabled), has_ifs, None, nested_set)


def _may_follow(parser: Parser, missing: set[str]) -> bool:
    """Whether a late ``set`` could follow; parsing the rest is slower than a search."""
    lexer = parser.lexer
    return bool(missing) and (
        not lexer.at_eof or _SET_WORD.search(lexer.text, lexer.pos) is not None
    )


def _late_set(statements: Iterator[Statement], missing: set[str]) -> Statement | None:
    """The first top-level ``set`` after the first command that turns a missing option
    on."""
    for statement in statements:
        if statement.depth or statement.conditional or statement.subshell:
            continue
        effect = set_effect(statement)
        if effect and effect.turned_on & missing:
            return statement
    return None


def _problems(text: str, verdict: Verdict, policy: Policy) -> list[Problem]:
    header = verdict.header
    first = header.first_command
    if first is None:
        return []  # nothing runs, so nothing runs unprotected
    problems = []
    command = describe(text, first)
    late_effect = set_effect(header.late_set) if header.late_set else None
    late_options = late_effect.turned_on if late_effect else frozenset()
    if late_effect is not None:
        problems.append(
            Problem(
                TOO_LATE,
                late_effect.statement.start,
                f"{describe(text, late_effect.statement)} comes too late: {command} "
                f"on line {line_of(text, first.start)} runs before it",
            )
        )
    # A late `set` that turns some options on does not help the first command: every
    # option off when it runs is named, not only those no `set` ever turns on.
    if any(option not in late_options for option in verdict.missing):
        problems.append(_missing_problem(text, verdict, list(verdict.missing), command))
    if policy.require_ifs and not header.has_ifs:
        fix = "IFS=$'\\n\\t'" if verdict.dialect.has_pipefail else _SH_IFS
        problems.append(
            Problem(NO_IFS, first.start, f"IFS is not set before {command}; add {fix}")
        )
    return problems


_SH_IFS = "IFS=\"$(printf '\\n\\t')\""


def _missing_problem(
    text: str, verdict: Verdict, missing: list[str], command: str
) -> Problem:
    header = verdict.header
    names = _join(missing)
    one = len(missing) == 1
    suggestion = "`set -euo pipefail`" if PIPEFAIL in verdict.required else "`set -eu`"
    if header.sets:
        last = header.sets[-1].statement
        offset = last.start
        message = (
            f"{names} {'is' if one else 'are'} off when {command} runs: "
            f"{describe(text, last)} does not turn {'it' if one else 'them'}"
            f" on; use {suggestion}"
        )
    else:
        offset = header.first_command.start  # type: ignore[union-attr]
        message = (
            f"{names} {'is' if one else 'are'} off when {command} runs; "
            f"add {suggestion} before it"
        )
    if header.nested_set is not None:
        message += (
            f" (the `set` on line {line_of(text, header.nested_set.start)} is inside a"
            " function, subshell, pipeline or condition, so it does not count)"
        )
    return Problem(MISSING, offset, message)


def _join(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def describe(text: str, statement: Statement, width: int = 40) -> str:
    """A statement as users wrote it, on one line and at most ``width`` characters."""
    end = statement.end
    if statement.kind == "compound":  # show the keyword's whole line: `if [[ -f x ]]`
        newline = text.find("\n", statement.start)
        end = len(text) if newline == -1 else newline
    source = printable(" ".join(text[statement.start : end].split()))
    if len(source) > width:
        source = source[: width - 3] + "..."
    return f"`{source}`"


def printable(text: str) -> str:
    """``text`` with control characters and undecodable bytes escaped (``\\udce9``)."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def column_of(text: str, offset: int) -> int:
    line_start = text.rfind("\n", 0, offset) + 1
    if line_start == 0 and text.startswith(BOM):
        line_start = 1  # editors do not show the byte order mark as a column
    return offset - line_start + 1
