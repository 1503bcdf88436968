"""What one top-level statement means for strict mode: a ``set`` and its effect on the
three options, an ``IFS`` assignment, or a harmless header line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlsmoke.strict_mode.lexer import Word
from mlsmoke.strict_mode.parser import Statement

ERREXIT, NOUNSET, PIPEFAIL = "errexit", "nounset", "pipefail"
OPTIONS = (ERREXIT, NOUNSET, PIPEFAIL)
SHORT_OPTIONS = {"e": ERREXIT, "u": NOUNSET}

# Commands that may come before `set` because they only prepare the shell.
HEADER_COMMANDS = frozenset(
    {"export", "readonly", "declare", "typeset", "local", "shopt", "trap", "source"}
    | {".", "cd", "umask", "unset", "alias", ":", "true", "set", "setopt", "emulate"}
)
_DECLARATIONS = frozenset({"export", "readonly", "declare", "typeset", "local"})
_PREFIXES = frozenset({"builtin", "command"})
IFS_VALUE = "\n\t"
# POSIX sh has no $'...': there, IFS is set with printf.
_IFS_PRINTF = re.compile(r"""IFS="?\$\(printf ['"]\\n\\t['"]\)"?""")


@dataclass(frozen=True)
class SetEffect:
    """What one ``set`` command turns on and off, and where its options end."""

    statement: Statement
    arguments: tuple[Word, ...]
    turned_on: frozenset[str]
    turned_off: frozenset[str]
    options_end: int  # offset just past its last option word (or past `set`)


def command_name(statement: Statement) -> str | None:
    """The literal name of the command a simple statement runs (None when computed)."""
    words = _unprefixed(statement.command_words)
    return words[0].value if words else None


def _unprefixed(words: tuple[Word, ...]) -> tuple[Word, ...]:
    while len(words) > 1 and words[0].value in _PREFIXES:
        words = words[1:]
    return words


def set_effect(statement: Statement) -> SetEffect | None:
    """The effect of a ``set`` statement on the three options; None for others."""
    if statement.kind != "simple":
        return None
    words = _unprefixed(statement.command_words)
    if not words or words[0].value != "set":
        return None
    turned_on: set[str] = set()
    turned_off: set[str] = set()
    options_end = words[0].end
    remaining = list(words[1:])
    while remaining:
        value = remaining[0].value
        if value is None or value in ("-", "--") or value[:1] not in ("-", "+"):
            break
        if len(value) < 2:
            break
        options_end = remaining.pop(0).end
        for letter in value[1:]:
            if letter == "o":
                if not remaining or remaining[0].value is None:
                    break
                name_word = remaining.pop(0)
                options_end, name = name_word.end, name_word.value
            elif letter in SHORT_OPTIONS:
                name = SHORT_OPTIONS[letter]
            else:
                continue
            if name in OPTIONS:
                on, off = (
                    (turned_on, turned_off)
                    if value[0] == "-"
                    else (turned_off, turned_on)
                )
                on.add(name)
                off.discard(name)
    return SetEffect(
        statement, words[1:], frozenset(turned_on), frozenset(turned_off), options_end
    )


def assigns_ifs(statement: Statement) -> bool:
    """Whether the statement sets ``IFS=$'\\n\\t'`` (or the same two characters)."""
    if statement.kind != "simple":
        return False
    words = statement.command_words
    candidates = statement.assignments
    if words and words[0].value in _DECLARATIONS:
        candidates += words[1:]
    return any(_is_ifs_assignment(word) for word in candidates)


def _is_ifs_assignment(word: Word) -> bool:
    if _IFS_PRINTF.fullmatch(word.raw):
        return True
    value = word.value
    return (
        value is not None
        and value.startswith("IFS=")
        and sorted(value[4:]) == sorted(IFS_VALUE)
    )


def prepares_only(statement: Statement) -> bool:
    """Whether the statement only prepares the shell: a definition, an assignment or
    a header command. Anything else is the script's first real command."""
    if statement.kind == "function":
        return True
    if statement.kind != "simple":
        return False
    if not statement.command_words:
        return True
    return command_name(statement) in HEADER_COMMANDS
