"""A list of paths as one verbose regex, one path a line, and back."""

from __future__ import annotations

import re
from collections.abc import Sequence

_ESCAPED = re.compile(r"\\(.)")


def to_regex(paths: Sequence[str], prefix: str = "", indent: str = "  ") -> list[str]:
    """``(?x)^<prefix>(`` then the escaped paths joined by ``|``, then ``)$``."""
    body = [f"{indent}{re.escape(path)}|" for path in sorted(paths)]
    body[-1] = body[-1][:-1]
    return [f"(?x)^{prefix}(", *body, ")$"]


def from_regex(regex: str, prefix: str = "") -> list[str]:
    """The paths of a regex :func:`to_regex` wrote; [] for any other regex."""
    lines = [line.strip() for line in regex.strip().splitlines()]
    if len(lines) < 2 or lines[0] != f"(?x)^{prefix}(" or lines[-1] != ")$":
        return []
    paths = []
    for line in lines[1:-1]:
        if line.endswith("|") and not line.endswith("\\|"):
            line = line[:-1]
        paths.append(_ESCAPED.sub(r"\1", line))
    return paths
