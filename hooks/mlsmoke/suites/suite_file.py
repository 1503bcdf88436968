"""The suite files under ``suites/``: one JSON file per suite, committed and reviewed.

Stable and diffable: header keys sorted, then ``"columns"`` (the names of an
example's values) and ``"examples"``, one example per line as a JSON array in the
columns' order (example_lines.py), examples by index, numbers to 6 significant
digits. A file is read with one ``json.loads`` and kept as columns. Versioned: a
file from another format version is an error naming the file and the key, never a
silent misreading. ``whole-set.json`` keeps the whole dataset's metric and the
fingerprint of every example's content hash.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.atomic import write_atomically
from mlsmoke.errors import MlsmokeError
from mlsmoke.suites.example_lines import (
    COLUMNS,
    LABEL_ISSUE,
    Lines,
    number,
    row_line,
)

FORMAT = "mlsmoke-suite"
VERSION = 2
WHOLE_SET = "whole-set"
WRITERS = 8  # suite files written at once


class SuiteFileError(MlsmokeError):
    """A suite file that cannot be read as this version's format."""


@dataclass
class SuiteFile:
    """One suite as recorded: its examples' baselines, as columns (entry i of each
    is the i-th example by index), and its metric."""

    name: str
    kind: str
    note: str
    metric: dict[str, float]
    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in COLUMNS}
    )
    recorded: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @classmethod
    def of_examples(
        cls, name: str, kind: str, note: str, metric: dict[str, float],
        examples: list[dict[str, Any]], recorded: dict[str, Any] | None = None,
    ) -> SuiteFile:  # fmt: skip
        """The suite of ``examples``, each a mapping of :data:`COLUMNS` (and
        possibly a label-issue hint)."""
        ordered = sorted(examples, key=lambda e: e["index"])
        names = list(COLUMNS)
        if any(LABEL_ISSUE in e for e in ordered):
            names.append(LABEL_ISSUE)
        columns = {key: [e.get(key) for e in ordered] for key in names}
        return cls(name, kind, note, metric, columns, recorded or {})

    @property
    def indices(self) -> list[int]:
        return self.columns.get("index", [])

    @property
    def examples(self) -> list[dict[str, Any]]:
        """One mapping per example (built on demand; decisions use the columns)."""
        names = list(self.columns)
        rows = [dict(zip(names, row)) for row in zip(*self.columns.values())]
        for row in rows:
            if row.get(LABEL_ISSUE, 0) is None:
                del row[LABEL_ISSUE]
        return rows

    def __len__(self) -> int:
        return len(self.indices)

    def to_json(self) -> dict[str, Any]:
        rows = [list(row) for row in zip(*self.columns.values())]
        return {**self.to_json_head(), "columns": list(self.columns), "examples": rows}

    def to_json_head(self) -> dict[str, Any]:
        """Everything but the columns and the examples."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "kind": self.kind,
            "note": self.note,
            "metric": {k: number(v) for k, v in self.metric.items()},
            "recorded": self.recorded,
        }


def render(suite: SuiteFile, known: Lines | None = None) -> str:
    """The file's text: sorted header keys, the columns, one example per line.
    ``known`` holds lines made already (example_lines.column_lines), by index, of
    examples of just :data:`COLUMNS`."""
    head = json.dumps(suite.to_json_head(), sort_keys=True, indent=1)
    names = list(suite.columns)
    lines: list[str] | None = None
    if known and tuple(names) == COLUMNS:
        try:
            lines = list(map(known.__getitem__, suite.indices))
        except (KeyError, IndexError):
            lines = None
    if lines is None:
        lines = list(map(row_line, zip(*suite.columns.values())))
    body = ",\n  ".join(lines)
    listed = f'"examples": [\n  {body}\n ]' if lines else '"examples": []'
    return head[:-2] + f',\n "columns": {json.dumps(names)},\n {listed}\n}}\n'


def file_name(suite: str) -> str:
    return f"{suite}.json"


def write(directory: Path, suite: SuiteFile, known: Lines | None = None) -> Path:
    """Write ``suite``'s file, atomically; a file that already holds these bytes is
    left as it is (a re-record of the same checkpoint touches nothing)."""
    path = directory / file_name(suite.name)
    _write_bytes(path, render(suite, known).encode())
    return path


def write_all(
    directory: Path, suites: list[SuiteFile], known: Lines | None = None
) -> None:
    """Write every suite's file (setting its ``path``): each rendered here, then
    written by a thread, so that the files' fsyncs wait for the disk together and
    while the next ones are rendered."""
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        writes = []
        for suite in suites:
            suite.path = directory / file_name(suite.name)
            data = render(suite, known).encode()
            writes.append(pool.submit(_write_bytes, suite.path, data))
        for done in writes:
            done.result()


def _write_bytes(path: Path, data: bytes) -> None:
    try:
        if path.is_file() and path.read_bytes() == data:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data, 0o644)
    except OSError as error:
        raise MlsmokeError(f"{path}: cannot write: {error.strerror}") from None


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
    for key in ("name", "kind", "note", "metric", "columns", "examples", "recorded"):
        if key not in data:
            raise SuiteFileError(f'{path}: suite {path.stem!r}: key "{key}" missing')
    where = f"{path}: suite {data['name']!r}"
    names = _column_names(where, data["columns"])
    return SuiteFile(
        data["name"], data["kind"], data["note"], data["metric"],
        _columns(where, names, data["examples"]), data["recorded"], path,
    )  # fmt: skip


def _column_names(where: str, names: Any) -> list[str]:
    if type(names) is not list or not set(map(type, names)) <= {str}:
        raise SuiteFileError(f'{where}: key "columns": not a list of names')
    missing = [name for name in COLUMNS if name not in names]
    if missing:
        raise SuiteFileError(f'{where}: key "columns": "{missing[0]}" missing')
    return names


def _columns(where: str, names: list[str], examples: Any) -> dict[str, list[Any]]:
    """The examples' values by column, checked a column at a time (a Python step
    per example only to name a bad one)."""
    if type(examples) is not list:
        raise SuiteFileError(
            f'{where}: key "examples": a {type(examples).__name__}, not a list'
        )
    width = len(names)
    if not set(map(type, examples)) <= {list} or set(map(len, examples)) - {width}:
        at = _first(examples, lambda row: type(row) is not list or len(row) != width)
        row = examples[at]
        got = f"{len(row)} values" if type(row) is list else f"a {type(row).__name__}"
        raise SuiteFileError(
            f"{where}: examples[{at}]: {got}, not one per column ({', '.join(names)})"
        )
    values = list(map(list, zip(*examples))) if examples else [[] for _ in names]
    columns = dict(zip(names, values))
    for name, kind, wanted in (("index", int, "a whole number"),
                               ("hash", str, "a string")):  # fmt: skip
        if set(map(type, columns[name])) - {kind}:
            at = _first(columns[name], lambda value: type(value) is not kind)
            raise SuiteFileError(
                f'{where}: examples[{at}]: column "{name}": not {wanted}'
            )
    return columns


def _first(values: list[Any], bad: Callable[[Any], bool]) -> int:
    return next(at for at, value in enumerate(values) if bad(value))


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
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue  # not readable: never removed
        ours = isinstance(data, dict) and data.get("format") == FORMAT
        if ours and data.get("name") not in kept:  # of any version
            stale.append(path)
    return stale
