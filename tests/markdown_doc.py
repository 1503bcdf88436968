"""What the README and docs/ tests read from a Markdown file: its headings' anchors as
GitHub makes them, its links, and its shell blocks' commands.

A plain module, not conftest.py, so that test files import it by name.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from typing import NamedTuple

FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
SHELL_LANGUAGES = {"console", "sh", "shell", "bash"}


class Block(NamedTuple):
    language: str
    lines: list[str]


def split_fences(text: str) -> tuple[list[str], list[Block]]:
    """The lines outside fenced code blocks (fenced lines blanked, so line numbers
    hold), and the fenced blocks with their info string's language."""
    prose: list[str] = []
    blocks: list[Block] = []
    fence: str | None = None
    for line in text.splitlines():
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
            blocks.append(Block(opened.group(2).lower(), []))
            prose.append("")
        elif fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            else:
                blocks[-1].lines.append(line)
            prose.append("")
        else:
            prose.append(line)
    return prose, blocks


def heading_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without Markdown, lower-cased, with
    punctuation dropped and each space a hyphen."""
    text = INLINE_CODE.sub(lambda m: m.group(2).strip(), heading)
    text = LINK.sub(lambda m: m.group(1), text)
    text = text.replace("*", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated one gets -1, -2, ... as on GitHub."""
    prose, _ = split_fences(text)
    seen: Counter[str] = Counter()
    found = set()
    for line in prose:
        heading = HEADING.match(line)
        if heading:
            slug = heading_slug(heading.group(2))
            found.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
            seen[slug] += 1
    return found


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline and reference link outside code; a
    link's text may span lines."""
    prose, _ = split_fences(text)
    lines = [INLINE_CODE.sub("", line) for line in prose]
    joined = "\n".join(lines)
    found = [(match.start(2), match.group(2)) for match in LINK.finditer(joined)]
    offset = 0
    for line in lines:
        reference = REFERENCE.match(line)
        if reference:
            found.append((offset + reference.start(1), reference.group(1)))
        offset += len(line) + 1
    return [(joined.count("\n", 0, at) + 1, target) for at, target in sorted(found)]


def shell_commands(block: Block) -> list[list[str]]:
    """The commands of a shell block, split as the shell would, comments dropped.

    In a block with ``$ `` prompts only the prompted lines are commands (the rest is
    their output); in a block without any, every line is one.
    """
    lines = [line for line in block.lines if line.strip()]
    if any(line.startswith("$ ") for line in lines):
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    return [
        words for words in (shlex.split(line, comments=True) for line in lines) if words
    ]
