"""The dialect of a script, from its shebang line.

``#!/bin/bash``, ``#!/usr/bin/env bash``, ``#!/usr/bin/env -S bash -x``, ``#!/bin/sh``
and friends name an interpreter; the dialect decides which options strict mode needs.
"""

from __future__ import annotations

import enum
import re


class Dialect(enum.Enum):
    BASH = "bash"
    KSH = "ksh"
    ZSH = "zsh"
    SH = "sh"
    DASH = "dash"

    @property
    def has_pipefail(self) -> bool:
        """Whether the shell accepts ``set -o pipefail`` (dash 0.5.12 rejects it)."""
        return self not in (Dialect.SH, Dialect.DASH)


_INTERPRETERS = {
    "bash": Dialect.BASH,
    "ksh": Dialect.KSH,
    "mksh": Dialect.KSH,
    "pdksh": Dialect.KSH,
    "oksh": Dialect.KSH,
    "zsh": Dialect.ZSH,
    "sh": Dialect.SH,
    "ash": Dialect.SH,
    "dash": Dialect.DASH,
}
_EXTENSIONS = {".bash": Dialect.BASH, ".ksh": Dialect.KSH, ".zsh": Dialect.ZSH}
# env options that take a separate argument, e.g. `env -u NAME bash`.
_ENV_OPTIONS_WITH_VALUE = {"-u", "--unset", "-C", "--chdir", "-P", "-a", "--argv0"}
_VERSION_SUFFIX = re.compile(r"[-.\d]+$")


BOM = "\ufeff"


def split_shebang(text: str) -> tuple[list[str] | None, int]:
    """The words after ``#!`` (None without a shebang), and where the body starts.

    A byte order mark is looked through; without a shebang the body starts at once.
    """
    offset = 1 if text.startswith(BOM) else 0
    if not text.startswith("#!", offset):
        return None, offset
    newline = text.find("\n", offset)
    line_end = len(text) if newline == -1 else newline
    return text[offset + 2 : line_end].split(), min(line_end + 1, len(text))


def dialect_of_shebang(words: list[str]) -> tuple[Dialect | None, str | None]:
    """The dialect a shebang's words select, and the program they name."""
    program = interpreter_name(words)
    return (dialect_of(program) if program else None), program


def interpreter_name(words: list[str]) -> str | None:
    """The program a shebang runs, seen through ``env`` (and ``-S``) and ``busybox``."""
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if program == "env":
        rest = _after_env_options(rest)
        if not rest:
            return None
        program, rest = rest[0].rsplit("/", 1)[-1], rest[1:]
    if program == "busybox" and rest:
        program = rest[0]
    return program


def _after_env_options(words: list[str]) -> list[str]:
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return words[index + 1 :]
        if word.startswith("-S") and len(word) > 2:  # -Sbash: the program is attached
            return [word[2:], *words[index + 1 :]]
        if word in _ENV_OPTIONS_WITH_VALUE:
            index += 2
        elif word.startswith("-") or "=" in word:
            index += 1
        else:
            return words[index:]
    return []


def dialect_of(program: str) -> Dialect | None:
    """The dialect of an interpreter name such as ``bash``, ``bash5.2`` or ``ksh93``."""
    return _INTERPRETERS.get(program) or _INTERPRETERS.get(
        _VERSION_SUFFIX.sub("", program)
    )


def dialect_without_shebang(filename: str) -> Dialect:
    """An executable with no shebang runs in the caller's shell: assume only POSIX sh,
    unless its extension names a shell."""
    for extension, dialect in _EXTENSIONS.items():
        if filename.endswith(extension):
            return dialect
    return Dialect.SH
