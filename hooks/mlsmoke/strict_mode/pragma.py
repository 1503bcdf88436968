"""The in-file escape valve: ``# mlsmoke: disable=strict-mode -- reason``.

``disable=`` takes ``strict-mode`` (the whole check) or problem codes such as ``SM003``,
comma-separated. The reason after ``--`` is for readers and is optional.
"""

from __future__ import annotations

import re

ALL = "strict-mode"
_PRAGMA = re.compile(r"#\s*mlsmoke:\s*disable=([\w,-]+)")


def disabled_codes(comment: str) -> frozenset[str]:
    """The codes a comment disables (empty when it is not a pragma)."""
    match = _PRAGMA.match(comment)
    if match is None:
        return frozenset()
    codes = {code.strip() for code in match.group(1).split(",")} - {""}
    return frozenset(ALL if code.lower() == ALL else code.upper() for code in codes)
