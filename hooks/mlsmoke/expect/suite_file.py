"""The suite file (default ``expectations.json``): committed, reviewed in diffs, so it
is written in one stable form: sorted keys, two-space indent, expectations sorted by
field and kind, a newline at the end.

::

    {
      "expectations": [{"digest": "...", "field": "[0]", "from": "...",
                        "kind": "dtype", "dtype": "float32"}, ...],
      "factor": 2.0,
      "format": 1,
      "recorded": {"batch": "pkg.data:loader", "batches": 4, ...}
    }

Each expectation carries the digest of its content as recorded: one whose content no
longer matches was edited by hand, and ``--record`` keeps it. ``"off": true`` turns
one off for good. A file that does not parse, or was written by a newer mlsmoke, is a
ConfigError naming the file and the line.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.cache_files import write_text_atomically
from mlsmoke.errors import ConfigError

FORMAT = 1
DIGEST = "digest"


@dataclass
class Suite:
    path: Path
    expectations: list[dict[str, Any]]
    factor: float
    recorded: dict[str, Any] = field(default_factory=dict)
    lines: list[int] = field(default_factory=list)  # each expectation's first line

    def where(self, number: int) -> str:
        line = self.lines[number] if number < len(self.lines) else 1
        return f"{self.path}:{line}"


def identity(expectation: dict[str, Any]) -> tuple[str, ...]:
    """What makes two expectations the same one, recorded twice."""
    extra = str(expectation.get("input") or expectation.get("of") or "")
    return (str(expectation.get("field")), str(expectation.get("kind")), extra)


def content_digest(expectation: dict[str, Any]) -> str:
    content = {k: v for k, v in expectation.items() if k != DIGEST}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def with_digest(expectation: dict[str, Any]) -> dict[str, Any]:
    return {**expectation, DIGEST: content_digest(expectation)}


def edited_by_hand(expectation: dict[str, Any]) -> bool:
    return expectation.get(DIGEST) != content_digest(expectation)


def dumps(suite: Suite) -> str:
    data = {
        "expectations": sorted(suite.expectations, key=identity),
        "factor": suite.factor,
        "format": FORMAT,
        "recorded": suite.recorded,
    }
    return _stable(data, 0) + "\n"


def _stable(value: Any, depth: int) -> str:
    """JSON with sorted keys and two-space indents, a list of plain values (a band,
    a shape) on one line, so that a diff shows one changed figure as one line."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict) and value:
        items = [
            f"{inner}{json.dumps(str(key))}: {_stable(value[key], depth + 1)}"
            for key in sorted(value)
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        if all(isinstance(v, list) for v in value) and depth > 1:
            return "[" + ", ".join(_stable(v, depth + 1) for v in value) + "]"
        items = [f"{inner}{_stable(v, depth + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value)


def write(suite: Suite) -> None:
    write_text_atomically(suite.path, dumps(suite))


def read(path: Path) -> Suite:
    """The suite at ``path``; ConfigError naming the file and the line when it is not
    one this mlsmoke can read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no expectations recorded; run mlsmoke expect --record"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path}:{error.lineno}: not valid JSON: {error.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: expected a JSON object with an expectations list")
    _check_format(path, text, data)
    factor = data.get("factor", 2.0)
    if (
        isinstance(factor, bool)
        or not isinstance(factor, (int, float))
        or not (math.isfinite(factor) and factor >= 1)
    ):
        raise ConfigError(
            f"{path}:{_line_of(text, 'factor')}: factor: expected a"
            f" number of at least 1, got {factor!r}"
        )
    expectations = data.get("expectations")
    if not isinstance(expectations, list):
        raise ConfigError(
            f"{path}:{_line_of(text, 'expectations')}: expectations:" " expected a list"
        )
    lines = _expectation_lines(text, len(expectations))
    suite = Suite(path, expectations, float(factor), data.get("recorded") or {}, lines)
    for number, expectation in enumerate(expectations):
        _check_expectation(suite, number, expectation)
    return suite


def _check_format(path: Path, text: str, data: dict[str, Any]) -> None:
    version = data.get("format")
    line = _line_of(text, "format")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ConfigError(
            f"{path}:{line}: format: expected a whole number (this"
            f" mlsmoke writes {FORMAT}), got {version!r}"
        )
    if version > FORMAT:
        raise ConfigError(
            f"{path}:{line}: written by a newer mlsmoke (format {version}; this one"
            f" reads format {FORMAT}): upgrade mlsmoke, or run mlsmoke expect --record"
            " to record the suite again"
        )


def _check_expectation(suite: Suite, number: int, expectation: Any) -> None:
    from mlsmoke.expect.kinds import KINDS  # the kinds import this module

    where = suite.where(number)
    if not isinstance(expectation, dict):
        raise ConfigError(f"{where}: expected an object per expectation")
    kind = expectation.get("kind")
    if kind not in KINDS:
        raise ConfigError(
            f"{where}: kind: expected one of {', '.join(sorted(KINDS))},"
            f" got {kind!r}"
        )
    for key in KINDS[kind].REQUIRED:
        if key not in expectation:
            raise ConfigError(f"{where}: a {kind} expectation needs {key!r}")


def _line_of(text: str, key: str) -> int:
    found = re.search(rf'"{re.escape(key)}"\s*:', text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _expectation_lines(text: str, count: int) -> list[int]:
    """The line of each expectation's ``"kind"`` key, in order (one per expectation
    in any file mlsmoke wrote, and in most written by hand)."""
    lines = [
        text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"kind"\s*:', text)
    ]
    if len(lines) == count:
        return lines
    return [_line_of(text, "expectations")] * count
