"""A hook's baseline: the files in its ``exclude:`` regex in .pre-commit-config.yaml.

Written as pre-commit documents multi-line excludes::

    # mlsmoke baseline: ...
    exclude: |
      (?x)^(
        scripts/old\\.sh|
        tools/build\\.sh
      )$

A hook with its own ``exclude:`` keeps it as the first alternative, in verbose form
(:func:`verbose`), and the baseline's paths follow it::

    exclude: |
      (?x)(?:
        ^vendor/
      )|^(
        scripts/old\\.sh
      )$
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mlsmoke.adopt import marks, regexlist
from mlsmoke.adopt import yamltree as tree

OWN_OPEN, OWN_CLOSE = "(?x)(?:", ")|^("
_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


def verbose(pattern: str) -> list[str]:
    """``pattern`` as lines that mean the same inside a ``(?x)`` regex: whitespace
    and ``#`` escaped, leading global flags made scoped (``(?i)a`` -> ``(?i:a)``)."""
    flags = _GLOBAL_FLAGS.match(pattern)
    body = pattern[flags.end() :] if flags else pattern
    if flags and "x" in flags.group(1):
        lines = [line for line in body.strip("\n").splitlines() if line.strip()]
    else:
        lines = [_escape_for_verbose(body)]
    if flags and flags.group(1) != "x":
        return [f"(?{flags.group(1)}:", *lines, ")"]
    return lines


def _escape_for_verbose(pattern: str) -> str:
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif char == "\n":
            out.append("\\n")
        elif char.isspace() or char == "#":
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def exclude_lines(
    paths: Sequence[str], column: int, own: Sequence[str] = ()
) -> list[str]:
    pad = " " * column
    comment = marks.comment("files that failed this hook") if paths else []
    if own and paths:
        comment.append("# Its first alternative is the hook's own exclude, kept.")
    comment = [pad + line for line in comment]
    if own and paths:
        regex = [OWN_OPEN, *(f"  {line.strip()}" for line in own), OWN_CLOSE]
        regex += [*regexlist.to_regex(paths)[1:]]
    elif own:
        regex = [OWN_OPEN, *(f"  {line.strip()}" for line in own), ")"]
    else:
        regex = regexlist.to_regex(paths)
    return [*comment, f"{pad}exclude: |", *(f"{pad}  {line}" for line in regex)]


def split(regex: str) -> tuple[list[str], list[str]]:
    """The hook's own exclude (verbose lines) and the baselined paths of ``regex``."""
    lines = [line.strip() for line in regex.strip().splitlines()]
    if lines[:1] == [OWN_OPEN] and OWN_CLOSE in lines:
        middle = lines.index(OWN_CLOSE)
        paths = regexlist.from_regex("\n".join(["(?x)^(", *lines[middle + 1 :]]))
        return lines[1:middle], paths
    return [], regexlist.from_regex(regex)


def _marker_start(lines: list[str], key_line: int) -> int | None:
    line = key_line - 1
    while line >= 0 and lines[line].lstrip().startswith("#"):
        if marks.is_marker(lines[line]):
            return line
        line -= 1
    return None


def read(text: str, name: str, hook_id: str) -> list[str] | None:
    """The baselined paths of a hook; None when it has no mlsmoke baseline."""
    root = tree.compose(text, name)
    pair = tree.get_pair(tree.find_hook(root, hook_id), "exclude")
    if pair is None:
        return None
    if _marker_start(text.splitlines(), pair[0].start_mark.line) is None:
        return None
    return split(tree.scalar(pair[1]) or "")[1]


def own_exclude(text: str, name: str, hook_id: str) -> str | None:
    """The part of the hook's ``exclude:`` that is the user's own, as a regex."""
    root = tree.compose(text, name)
    pair = tree.get_pair(tree.find_hook(root, hook_id), "exclude")
    if pair is None:
        return None
    value = tree.scalar(pair[1]) or ""
    if _marker_start(text.splitlines(), pair[0].start_mark.line) is None:
        return value
    own = split(value)[0]
    return "\n".join(["(?x)", *own]) if own else None


def write(text: str, name: str, hook_id: str, paths: Sequence[str]) -> str:
    """``text`` with the hook's baseline holding exactly ``paths`` (none: removed).
    A hook's own ``exclude:`` stays, extended by the baseline's paths."""
    root = tree.compose(text, name)
    hook = tree.find_hook(root, hook_id)
    if hook is None:
        return text
    lines = text.splitlines()
    pair = tree.get_pair(hook, "exclude")
    own: list[str] = []
    if pair is not None:
        start = _marker_start(lines, pair[0].start_mark.line)
        value = tree.scalar(pair[1]) or ""
        if start is None:
            if not paths:
                return text
            own, start = verbose(value), pair[0].start_mark.line
        else:
            own = split(value)[0]
        del lines[start : tree.last_line(pair[1], lines) + 1]
        text = "\n".join(lines) + "\n"
        root = tree.compose(text, name)
        hook = tree.find_hook(root, hook_id)
        lines = text.splitlines()
    if not paths and not own:
        return text
    block = exclude_lines(paths, hook.start_mark.column, own)
    lines[tree.last_line(hook, lines) + 1 : tree.last_line(hook, lines) + 1] = block
    return "\n".join(lines) + "\n"
