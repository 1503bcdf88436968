"""Path globs of the configuration (``exclude``) as regular expressions."""

from __future__ import annotations

import re


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``**/`` is any number of directories, ``*`` and ``?``
    stay inside one path segment."""
    parts, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pattern[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(parts) + r"\Z")
