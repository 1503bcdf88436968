"""The ``>>>`` examples of Markdown, reStructuredText and plain-text documents.

Standard library only: this runs inside the project's interpreter.

reStructuredText and plain text are doctest's native formats and parse as they are. In
Markdown, only fenced code blocks in Python (or with no language) hold examples: a
``>>>`` outside a fence is a nested block quote, not code. Everything else, fence lines
included, becomes a blank line. The line numbers stay true, and a closing fence right
after an example's output ends that output instead of becoming part of it.
"""

from __future__ import annotations

import re

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
TEXT_SUFFIXES = (".rst", ".rest", ".txt")
PYTHON_LANGUAGES = frozenset(
    {"", "python", "python3", "py", "py3", "pycon", "pycon3", "doctest", "pytb"}
)

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def document_kind(filename: str) -> str:
    """``markdown``, ``text`` (rst and txt) or ``python``, from the file name."""
    lowered = filename.lower()
    if lowered.endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    if lowered.endswith(TEXT_SUFFIXES):
        return "text"
    return "python"


def example_text(text: str, kind: str) -> str:
    """The part of a document that doctest should parse, line numbers preserved."""
    return markdown_example_text(text) if kind == "markdown" else text


def markdown_example_text(text: str) -> str:
    """Only the lines inside Python fenced code blocks; every other line left blank."""
    kept: list[str] = []
    fence = ""  # the opening fence of the block we are in, "" outside blocks
    runs_examples = False
    for line in text.splitlines():
        match = _FENCE.match(line)
        if not fence and match and _opens(match):
            fence = match["fence"]
            runs_examples = fence_language(match["info"]) in PYTHON_LANGUAGES
            kept.append("")
        elif fence and match and _closes(match, fence):
            fence = ""
            kept.append("")
        else:
            kept.append(line if fence and runs_examples else "")
    return "\n".join(kept) + "\n"


def fence_language(info: str) -> str:
    """The language of a fence's info string, ``{.python .numberLines}`` too."""
    words = info.strip().strip("{}").split()
    return words[0].lstrip(".").lower() if words else ""


def _opens(match: re.Match[str]) -> bool:
    # A backtick fence's info string cannot hold a backtick (that is inline code).
    return not (match["fence"][0] == "`" and "`" in match["info"])


def _closes(match: re.Match[str], fence: str) -> bool:
    closing = match["fence"]
    return (
        closing[0] == fence[0]
        and len(closing) >= len(fence)
        and not match["info"].strip()
    )
