"""Line edits of pyproject.toml that keep everything else byte for byte.

A key is replaced with its whole value (a multi-line array or string included) and the
marker comment above it; a missing table is appended at the end of the file. Every
result is parsed again before it is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from mlsmoke.adopt import marks
from mlsmoke.config import tomllib
from mlsmoke.errors import ConfigError

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def parse(text: str, name: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{name}: not valid TOML: {error}; nothing was written")


def lookup(data: dict, dotted: str) -> object:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _table_span(lines: list[str], table: str) -> tuple[int, int] | None:
    wanted = _split(table)
    for index, line in enumerate(lines):
        match = _HEADER.match(line)
        if match and _split(match.group(1)) == wanted:
            end = index + 1
            while end < len(lines) and not _ANY_HEADER.match(lines[end]):
                end += 1
            return index, end
    return None


def _split(dotted: str) -> list[str]:
    return [part.strip().strip("\"'") for part in dotted.split(".")]


def _value_end(lines: list[str], first: int) -> int:
    """The line after a key's value: multi-line arrays and strings included."""
    value = lines[first].split("=", 1)[1]
    for quote in ("'''", '"""'):
        if value.count(quote) == 1:
            end = first + 1
            while end < len(lines) and quote not in lines[end]:
                end += 1
            return end + 1
    depth, index = _depth(value), first + 1
    while depth > 0 and index < len(lines):
        depth += _depth(lines[index])
        index += 1
    return index


def _depth(line: str) -> int:
    code = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'", "", line).split("#", 1)[0]
    return code.count("[") - code.count("]")


def key_span(text: str, table: str, key: str) -> tuple[int, int, int] | None:
    """(marker or key line, key line, end) of ``key`` in ``[table]``, or None."""
    lines = text.splitlines()
    span = _table_span(lines, table)
    if span is None:
        return None
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for index in range(span[0] + 1, span[1]):
        if pattern.match(lines[index]):
            start = index
            while start > span[0] + 1 and lines[start - 1].lstrip().startswith("#"):
                start -= 1
            has_marker = any(marks.is_marker(line) for line in lines[start:index])
            return (start if has_marker else index), index, _value_end(lines, index)
    return None


def set_key(text: str, name: str, table: str, key: str, block: Sequence[str]) -> str:
    """``text`` with ``key`` of ``[table]`` written as ``block`` (none: removed)."""
    lines = text.splitlines()
    found = key_span(text, table, key)
    if found is not None:
        lines[found[0] : found[2]] = block
        if not block:
            _drop_if_empty(lines, table)
    elif block:
        span = _table_span(lines, table)
        if span is None:
            if (
                lookup(parse(text, name), f"{table}.{key}") is not None
                or lookup(parse(text, name), table) is not None
            ):
                raise ConfigError(
                    f"{name}: {table} is written inline or as dotted keys; "
                    f"mlsmoke init edits only a [{table}] table: move it there"
                )
            lines += ([""] if lines and lines[-1].strip() else []) + [f"[{table}]"]
            lines += block
        else:
            end = span[1]
            while end > span[0] + 1 and not lines[end - 1].strip():
                end -= 1
            lines[end:end] = block
    result = "\n".join(lines) + "\n" if lines else ""
    parse(result, name)
    return result


def _drop_if_empty(lines: list[str], table: str) -> None:
    """Remove ``[table]`` when nothing but blank lines is left in it (its last key
    was a baseline), with the blank line that set it apart at the end of the file."""
    span = _table_span(lines, table)
    if span is None or any(line.strip() for line in lines[span[0] + 1 : span[1]]):
        return
    start, end = span
    if end == len(lines) and start > 0 and not lines[start - 1].strip():
        start -= 1
    del lines[start:end]


def string_line(key: str, value: str) -> str:
    return f"{key} = {json.dumps(value)}"


def array_block(
    key: str, own: Sequence[str], baseline: Sequence[str], what: str
) -> list[str]:
    """``key = [...]``: the user's entries, then the marked baseline."""
    if not own and not baseline:
        return []
    lines = [f"{key} = ["]
    lines += [f"    {json.dumps(entry)}," for entry in own]
    if baseline:
        lines += [f"    {line}" for line in marks.comment(what)]
        lines += [f"    {json.dumps(entry)}," for entry in sorted(baseline)]
    return [*lines, "]"]


def split_array(text: str, table: str, key: str) -> tuple[list[str], list[str]]:
    """The user's entries of an array key and the baseline's (after the marker)."""
    found = key_span(text, table, key)
    if found is None:
        return [], []
    lines = text.splitlines()[found[1] : found[2]]
    value = lookup(parse("\n".join(lines) + "\n", "pyproject.toml"), key)
    entries = list(value) if isinstance(value, list) else [value] if value else []
    marker = next((i for i, line in enumerate(lines) if marks.is_marker(line)), None)
    if marker is None:
        return entries, []
    after = "\n".join(["x = ["] + lines[marker:])
    if not after.rstrip().endswith("]"):
        after += "\n]"
    baseline = lookup(parse(after + "\n", "pyproject.toml"), "x") or []
    return [entry for entry in entries if entry not in baseline], list(baseline)
