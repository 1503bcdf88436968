"""The suite files under ``suites/``: one JSON file per suite, committed and reviewed.

Stable and diffable: keys sorted, one example per line, examples by index, numbers
to 6 significant digits. Versioned: a file from another format version is an error
naming the file and the key, never a silent misreading. ``whole-set.json`` keeps the
whole dataset's metric and the fingerprint of every example's content hash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.atomic import write_atomically
from mlsmoke.errors import MlsmokeError
from mlsmoke.suites.example_lines import (
    EXAMPLE_KEY_SET,
    EXAMPLE_KEYS,
    example_json,
    example_line,
    number,
)

FORMAT = "mlsmoke-suite"
VERSION = 1
WHOLE_SET = "whole-set"
WRITERS = 8  # suite files written at once


class SuiteFileError(MlsmokeError):
    """A suite file that cannot be read as this version's format."""


@dataclass
class SuiteFile:
    """One suite as recorded: its examples' baselines and its metric."""

    name: str
    kind: str
    note: str
    metric: dict[str, float]
    examples: list[dict[str, Any]] = field(default_factory=list)
    recorded: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.to_json_head(), "examples": [
            example_json(e) for e in self.sorted_examples()]}  # fmt: skip

    def to_json_head(self) -> dict[str, Any]:
        """Everything but the examples."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "kind": self.kind,
            "note": self.note,
            "metric": {k: number(v) for k, v in self.metric.items()},
            "recorded": self.recorded,
        }

    def sorted_examples(self) -> list[dict[str, Any]]:
        return sorted(self.examples, key=lambda e: e["index"])


def render(suite: SuiteFile, known: Mapping[int, str] | None = None) -> str:
    """The file's text: sorted keys, one example per line. ``known`` holds lines
    made already (example_lines.column_lines), by index, of examples holding just
    the six keys."""
    data = suite.to_json_head()
    head = json.dumps(data, sort_keys=True, indent=1)
    known = known or {}
    lines = [
        (
            known[e["index"]]
            if e["index"] in known and e.keys() == EXAMPLE_KEY_SET
            else example_line(e)
        )
        for e in suite.sorted_examples()
    ]
    body = ",\n  ".join(lines)
    listed = f'"examples": [\n  {body}\n ]' if lines else '"examples": []'
    return head[:-2] + f",\n {listed}\n}}\n"


def file_name(suite: str) -> str:
    return f"{suite}.json"


def write(
    directory: Path, suite: SuiteFile, known: Mapping[int, str] | None = None
) -> Path:
    """Write ``suite``'s file, atomically; a file that already holds these bytes is
    left as it is (a re-record of the same checkpoint touches nothing)."""
    path = directory / file_name(suite.name)
    data = render(suite, known).encode()
    try:
        if path.is_file() and path.read_bytes() == data:
            return path
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data, 0o644)
    except OSError as error:
        raise MlsmokeError(f"{path}: cannot write: {error.strerror}") from None
    return path


def write_all(
    directory: Path, suites: list[SuiteFile], known: Mapping[int, str] | None = None
) -> None:
    """Write every suite's file (setting its ``path``), side by side: while one
    file's fsync waits for the disk, the next is rendered and written."""
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        paths = list(pool.map(lambda suite: write(directory, suite, known), suites))
    for suite, path in zip(suites, paths):
        suite.path = path


def read(path: Path) -> SuiteFile:
    """One suite file; SuiteFileError naming the file and the key."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SuiteFileError(f"{path}: cannot read: {error.strerror}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise SuiteFileError(f"{path}: not a suite file (not JSON: {error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SuiteFileError(f'{path}: key "format": not {FORMAT!r}; not a suite file')
    version = data.get("version")
    if version != VERSION:
        raise SuiteFileError(
            f'{path}: suite {data.get("name", path.stem)!r}, key "version": version'
            f" {version!r}, and this mlsmoke reads version {VERSION}; record the"
            " suites again (mlsmoke suites record) or check them with the mlsmoke"
            " that wrote them"
        )
    for key in ("name", "kind", "note", "metric", "examples", "recorded"):
        if key not in data:
            raise SuiteFileError(f'{path}: suite {path.stem!r}: key "{key}" missing')
    examples = data["examples"]
    if type(examples) is not list:
        raise SuiteFileError(
            f'{path}: suite {data["name"]!r}: key "examples": a'
            f" {type(examples).__name__}, not a list"
        )
    if not _well_formed(examples):
        for position, example in enumerate(examples):
            if type(example) is not dict or not EXAMPLE_KEY_SET <= example.keys():
                raise SuiteFileError(
                    _example_problem(path, data["name"], position, example)
                )
    return SuiteFile(
        data["name"], data["kind"], data["note"], data["metric"], data["examples"],
        data["recorded"], path,
    )  # fmt: skip


def _well_formed(examples: Any) -> bool:
    """Whether every one of ``examples`` is an object with every example key
    (checked without a Python step per example)."""
    return set(map(type, examples)) <= {dict} and all(
        map(EXAMPLE_KEY_SET.issubset, examples)
    )


def _example_problem(path: Path, suite: str, position: int, example: Any) -> str:
    where = f"{path}: suite {suite!r}: examples[{position}]"
    if not isinstance(example, dict):
        return f"{where}: a {type(example).__name__}, not an object"
    missing = next(key for key in EXAMPLE_KEYS if key not in example)
    return f'{where}: key "{missing}" missing'


def read_directory(directory: Path) -> list[SuiteFile]:
    """Every suite file in ``directory``, whole-set.json first; an error when there
    is none (check needs a record)."""
    paths = sorted(directory.glob("*.json")) if directory.is_dir() else []
    suites = [read(path) for path in paths]
    if not any(suite.name == WHOLE_SET for suite in suites):
        raise SuiteFileError(
            f"{directory / file_name(WHOLE_SET)}: no recorded suites; run"
            " mlsmoke suites record first (and commit the suites directory)"
        )
    return sorted(suites, key=lambda s: (s.name != WHOLE_SET, s.name))


def stale_files(directory: Path, kept: set[str]) -> list[Path]:
    """Suite files in ``directory`` a new record no longer writes."""
    if not directory.is_dir():
        return []
    stale = []
    for path in sorted(directory.glob("*.json")):
        try:
            name = read(path).name
        except SuiteFileError:
            continue  # not ours, or not readable: never removed
        if name not in kept:
            stale.append(path)
    return stale
