"""The dialect comes from the shebang, through env (and env -S) and busybox."""

from __future__ import annotations

import pytest

from mlsmoke.strict_mode.shebang import (
    Dialect,
    dialect_of_shebang,
    dialect_without_shebang,
    split_shebang,
)


@pytest.mark.parametrize(
    "first_line, dialect",
    [
        ("#!/bin/bash", Dialect.BASH),
        ("#! /bin/bash -e", Dialect.BASH),
        ("#!/usr/bin/env bash", Dialect.BASH),
        ("#!/usr/bin/env -S bash -x", Dialect.BASH),
        ("#!/usr/bin/env -Sbash", Dialect.BASH),
        ("#!/usr/bin/env -S LC_ALL=C bash", Dialect.BASH),
        ("#!/usr/bin/env -i -u HOME bash", Dialect.BASH),
        ("#!/usr/bin/env -- bash", Dialect.BASH),
        ("#!/opt/homebrew/bin/bash5.2", Dialect.BASH),
        ("#!/bin/ksh", Dialect.KSH),
        ("#!/usr/bin/ksh93", Dialect.KSH),
        ("#!/bin/mksh", Dialect.KSH),
        ("#!/bin/zsh", Dialect.ZSH),
        ("#!/bin/sh", Dialect.SH),
        ("#!/bin/busybox sh", Dialect.SH),
        ("#!/bin/ash", Dialect.SH),
        ("#!/bin/dash", Dialect.DASH),
        ("#!/usr/bin/env dash", Dialect.DASH),
        ("#!/usr/bin/env python3", None),
        ("#!/usr/bin/env", None),
        ("#!", None),
    ],
)
def test_dialect_of_shebang(first_line: str, dialect: Dialect | None) -> None:
    words, _ = split_shebang(first_line + "\n")
    assert words is not None
    assert dialect_of_shebang(words)[0] is dialect


@pytest.mark.parametrize(
    "text, words, body_start",
    [
        ("#!/bin/bash\necho\n", ["/bin/bash"], 12),
        ("#!/bin/bash\r\necho\r\n", ["/bin/bash"], 13),
        ("\ufeff#!/bin/sh\n", ["/bin/sh"], 11),
        ("#!/bin/sh", ["/bin/sh"], 9),
        ("echo\n", None, 0),
        (" #!/bin/bash\n", None, 0),
    ],
)
def test_split_shebang(text: str, words: list[str] | None, body_start: int) -> None:
    assert split_shebang(text) == (words, body_start)


def test_pipefail_support_by_dialect() -> None:
    assert [d.value for d in Dialect if not d.has_pipefail] == ["sh", "dash"]


@pytest.mark.parametrize(
    "name, dialect",
    [("run", Dialect.SH), ("x.sh", Dialect.SH), ("x.bash", Dialect.BASH)],
)
def test_dialect_without_shebang(name: str, dialect: Dialect) -> None:
    assert dialect_without_shebang(name) is dialect
