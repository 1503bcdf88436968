"""The suite files under ``suites/``: one JSON file per suite, committed and reviewed.

Stable and diffable: keys sorted, one example per line, examples by index, numbers
to 6 significant digits. Versioned: a file from another format version is an error
naming the file and the key, never a silent misreading. ``whole-set.json`` keeps the
whole dataset's metric and the fingerprint of every example's content hash.
"""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.atomic import write_atomically
from mlsmoke.errors import MlsmokeError

FORMAT = "mlsmoke-suite"
VERSION = 1
WHOLE_SET = "whole-set"
WRITERS = 8  # suite files written at once
EXAMPLE_KEYS = ("index", "hash", "label", "prediction", "loss", "score")
_EXAMPLE_KEY_SET = frozenset(EXAMPLE_KEYS)
_LINE = json.JSONEncoder(
    sort_keys=True
)  # one example per line; made once, not per line


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
            _example_json(e) for e in self.sorted_examples()]}  # fmt: skip

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


def number(value: Any) -> Any:
    """6 significant digits, so a re-record of the same model changes no line;
    NaN and infinities as strings, so the file stays standard JSON."""
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    if not math.isfinite(value):
        return str(value)
    return float(f"{value:.6g}")


def example_line(example: dict[str, Any]) -> str:
    """One example's line, as the JSON encoder writes it with sorted keys: a
    classifier's example directly (the encoder's cost per call would be most of a
    record's), any other through the encoder."""
    if not _plain(example):
        return _LINE.encode(_example_json(example))
    return (
        f'{{"hash": "{example["hash"]}", "index": {example["index"]}, "label":'
        f' {example["label"]}, "loss": {_number_text(example["loss"])},'
        f' "prediction": {example["prediction"]}, "score":'
        f' {_number_text(example["score"])}}}'
    )


def _plain(example: dict[str, Any]) -> bool:
    """Only the six keys; int classes, finite float figures, and a hash that JSON
    writes as it is."""
    if example.keys() != _EXAMPLE_KEY_SET:
        return False
    digest, loss, score = example["hash"], example["loss"], example["score"]
    return (
        type(example["index"]) is int
        and type(example["label"]) is int
        and type(example["prediction"]) is int
        and type(digest) is str
        and digest.isascii()
        and digest.isalnum()
        and type(loss) is float
        and type(score) is float
        and math.isfinite(loss)
        and math.isfinite(score)
    )


def _number_text(value: float) -> str:
    """The encoder's text for ``number(value)``, a finite float, from its 6-digit
    text: a float read from 6 significant digits writes back as those digits, so
    the two agree but for a missing ".0", a large exponent, and the subnormals
    (which keep fewer digits)."""
    text = f"{value:.6g}"
    if "e+" in text or "e-3" in text:
        return repr(float(text))  # 1.23457e+06 is written 1234570.0
    if "." in text or "e" in text:
        return text
    return text + ".0"


def _example_json(example: dict[str, Any]) -> dict[str, Any]:
    rounded = dict(example)
    for key, value in example.items():
        if type(value) is not int and type(value) is not str:
            rounded[key] = _deep_number(value)
    return rounded


def _deep_number(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return number(value)
    if kind is dict:
        return {k: _deep_number(v) for k, v in value.items()}
    if kind is list and any(type(v) is not int for v in value):
        return [_deep_number(v) for v in value]
    return value  # ints, strings, None, lists of ints (token labels)


def render(suite: SuiteFile) -> str:
    """The file's text: sorted keys, one example per line."""
    data = suite.to_json_head()
    head = json.dumps(data, sort_keys=True, indent=1)
    lines = [example_line(e) for e in suite.sorted_examples()]
    body = ",\n  ".join(lines)
    listed = f'"examples": [\n  {body}\n ]' if lines else '"examples": []'
    return head[:-2] + f",\n {listed}\n}}\n"


def file_name(suite: str) -> str:
    return f"{suite}.json"


def write(directory: Path, suite: SuiteFile) -> Path:
    """Write ``suite``'s file, atomically; a file that already holds these bytes is
    left as it is (a re-record of the same checkpoint touches nothing)."""
    path = directory / file_name(suite.name)
    data = render(suite).encode()
    try:
        if path.is_file() and path.read_bytes() == data:
            return path
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data, 0o644)
    except OSError as error:
        raise MlsmokeError(f"{path}: cannot write: {error.strerror}") from None
    return path


def write_all(directory: Path, suites: list[SuiteFile]) -> None:
    """Write every suite's file (setting its ``path``), side by side: while one
    file's fsync waits for the disk, the next is rendered and written."""
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        paths = list(pool.map(lambda suite: write(directory, suite), suites))
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
    for position, example in enumerate(data["examples"]):
        if type(example) is not dict or not _EXAMPLE_KEY_SET <= example.keys():
            raise SuiteFileError(
                _example_problem(path, data["name"], position, example)
            )
    return SuiteFile(
        data["name"], data["kind"], data["note"], data["metric"], data["examples"],
        data["recorded"], path,
    )  # fmt: skip


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
