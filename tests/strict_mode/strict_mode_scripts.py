"""Helpers shared by the strict-mode tests: a script's verdict from its text alone."""

from __future__ import annotations

from mlsmoke.strict_mode.checker import Policy, Verdict, examine
from mlsmoke.strict_mode.fixer import fix
from mlsmoke.strict_mode.shebang import (
    Dialect,
    dialect_of_shebang,
    dialect_without_shebang,
    split_shebang,
)


def locate(text: str, filename: str = "script.sh") -> tuple[Dialect, int]:
    words, body_start = split_shebang(text)
    if words is None:
        return dialect_without_shebang(filename), body_start
    dialect, program = dialect_of_shebang(words)
    assert dialect is not None, program
    return dialect, body_start


def verdict_of(text: str, policy: Policy = Policy()) -> Verdict:
    dialect, body_start = locate(text)
    verdict = examine(text, True, dialect, body_start, policy)
    assert verdict is not None
    return verdict


def codes_of(text: str, policy: Policy = Policy()) -> list[str]:
    return [problem.code for problem in verdict_of(text, policy).problems]


def fixed(text: str, policy: Policy = Policy()) -> str | None:
    dialect, body_start = locate(text)
    return fix(text, verdict_of(text, policy), body_start, policy)
