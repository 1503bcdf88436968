"""How a baseline is marked, in every file that holds one."""

from __future__ import annotations

MARKER = "mlsmoke baseline"


def comment(what: str) -> list[str]:
    """The comment block above a baseline: what it is, and how it shrinks."""
    return [
        f"# {MARKER}: {what}, the day the check was adopted.",
        "# New files get every rule; fix a file, then `mlsmoke debt --update`.",
    ]


def is_marker(line: str) -> bool:
    return line.lstrip().startswith("#") and MARKER in line
