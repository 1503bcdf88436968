"""flake8's configuration: where it lives, what it says, and its baseline.

flake8 reads the first of setup.cfg, tox.ini and .flake8 with a ``[flake8]`` section.
The baseline is the tail of ``per-file-ignores``, after a marker comment, one line per
file listing the codes it violates (configparser drops comments inside a value)::

    per-file-ignores =
        __init__.py:F401
        # mlsmoke baseline: ...
        src/legacy.py:E501,F401

flake8 splits that value at whitespace, commas and colons and matches each name with
fnmatch, so a baseline line names its file as a pattern (:func:`to_pattern`).
"""

from __future__ import annotations

import configparser
import glob
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from mlsmoke.adopt import marks
from mlsmoke.errors import ConfigError

CANDIDATES = ("setup.cfg", "tox.ini", ".flake8")
SECTION = "flake8"
PER_FILE = "per-file-ignores"
# black's line length and its two deliberate disagreements with pycodestyle.
BLACK_COMPATIBLE = {"max-line-length": "88", "extend-ignore": "E203,E701"}
_HEADER = re.compile(r"^\[([^\]]+)\]\s*$")
_KEY = re.compile(r"^([A-Za-z0-9_.-]+)\s*[=:]")
_GLOB_CHARACTER = re.compile(r"([*?[])")
_SPLITS_A_NAME = re.compile(r"[\s,:]")  # where flake8 ends a per-file-ignores name
_ESCAPED = re.compile(r"\[([*?[])\]")


def to_pattern(path: str) -> str:
    """``path`` as flake8 matches it and that file only: glob characters escaped, a
    character flake8 would split the name at matched by ``?``, and a file at the
    root anchored there with ``./`` (a bare name matches that name in any directory,
    and a line starting with ``#`` or ``;`` would be a comment)."""
    pattern = _SPLITS_A_NAME.sub("?", _GLOB_CHARACTER.sub(r"[\1]", path))
    return pattern if "/" in pattern and pattern[0] not in "#;" else "./" + pattern


def from_pattern(pattern: str, root: Path | None = None) -> str:
    """The path :func:`to_pattern` wrote ``pattern`` for; a ``?`` it put for a space
    or a comma is read back from the file under ``root`` that it matches."""
    name = pattern.removeprefix("./")
    if _GLOB_CHARACTER.search(_ESCAPED.sub("", name)) and root is not None:
        found = sorted(glob.glob(name, root_dir=root))
        if found:
            return found[0]
    return _ESCAPED.sub(r"\1", name)


def find_config(root: Path) -> Path:
    """The file flake8 reads its configuration from; .flake8 when none has one."""
    for name in CANDIDATES:
        path = root / name
        if path.is_file() and _section_range(path.read_text("utf-8", "replace")):
            return path
    return root / ".flake8"


def _normal(key: str) -> str:
    return key.strip().lower().replace("_", "-")


def _section_range(text: str) -> tuple[int, int] | None:
    """Lines [start, end) of the [flake8] section, header included."""
    lines = text.splitlines()
    start = None
    for index, line in enumerate(lines):
        header = _HEADER.match(line)
        if header and start is not None:
            return start, index
        if header and header.group(1).strip() == SECTION:
            start = index
    return (start, len(lines)) if start is not None else None


def settings(text: str, name: str) -> dict[str, str]:
    """The [flake8] section's keys (normalized) and values."""
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, source=name)
    except configparser.Error as error:
        raise ConfigError(f"{name}: not a valid INI file: {error}") from None
    if not parser.has_section(SECTION):
        return {}
    return {_normal(key): value for key, value in parser.items(SECTION)}


def _key_lines(lines: list[str], start: int, end: int, key: str) -> tuple[int, int]:
    """Lines [first, last) of ``key`` and its continuation, or (-1, -1)."""
    for index in range(start + 1, end):
        match = _KEY.match(lines[index])
        if match and _normal(match.group(1)) == key:
            last = index + 1
            while last < end and lines[last][:1] in (" ", "\t") and lines[last].strip():
                last += 1
            return index, last
    return -1, -1


def _entries(lines: Sequence[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip() and not _comment(line)]


def _comment(line: str) -> bool:
    return line.lstrip().startswith(("#", ";"))


def split_per_file(
    text: str, root: Path | None = None
) -> tuple[list[str], dict[str, list[str]]]:
    """The user's own per-file-ignores entries, and the baseline: path -> codes (the
    files of ``root`` that a ``?`` in a baseline pattern stands for)."""
    span = _section_range(text)
    if span is None:
        return [], {}
    lines = text.splitlines()
    first, last = _key_lines(lines, *span, PER_FILE)
    if first < 0:
        return [], {}
    value = [lines[first].split("=", 1)[-1] if "=" in lines[first] else ""]
    value += lines[first + 1 : last]
    marker = next((i for i, line in enumerate(value) if marks.is_marker(line)), None)
    own = _entries(value if marker is None else value[:marker])
    baseline = {}
    for entry in _entries(value[marker:] if marker is not None else []):
        pattern, _, codes = entry.rpartition(":")
        baseline[from_pattern(pattern, root)] = [c for c in codes.split(",") if c]
    return own, baseline


def write_baseline(
    text: str, baseline: Mapping[str, Sequence[str]], compatible: bool = True
) -> str:
    """``text`` with the baseline holding exactly ``baseline``, and black's settings
    added where the section has none of its own."""
    if _section_range(text) is None:
        text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + f"[{SECTION}]\n"
    lines = text.splitlines()
    start, end = _section_range(text)
    if compatible:
        present = settings(text, "config")
        for key, value in BLACK_COMPATIBLE.items():
            if key not in present and not (
                key == "extend-ignore" and "ignore" in present
            ):
                lines.insert(start + 1, f"{key} = {value}")
                end += 1
    first, last = _key_lines(lines, start, end, PER_FILE)
    block = [f"    {line}" for line in marks.comment("flake8 codes each file violated")]
    block += [
        f"    {to_pattern(path)}:{','.join(codes)}"
        for path, codes in sorted(baseline.items())
    ]
    if first < 0:
        if baseline:
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            lines[end:end] = [f"{PER_FILE} =", *block]
        return "\n".join(lines) + "\n"
    marker = next(
        (i for i in range(first + 1, last) if marks.is_marker(lines[i])), last
    )
    lines[marker:last] = block if baseline else []
    if not baseline and marker == first + 1 and "=" in lines[first]:
        if not lines[first].split("=", 1)[1].strip():
            del lines[first]
    return "\n".join(lines) + "\n"
