"""The suite file: one stable form, its errors named by file and line, and --record's
merge that keeps hand edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlsmoke.errors import ConfigError
from mlsmoke.expect import suite_file
from mlsmoke.expect.merge import merge
from mlsmoke.expect.suite_file import Suite, with_digest

RANGE = with_digest(
    {"kind": "value_range", "field": "x", "min": -0.2, "max": 1.2, "from": "0..1"}
)
DTYPE = with_digest({"kind": "dtype", "field": "x", "dtype": "float32", "from": "f"})


def written(tmp_path: Path, expectations: list) -> Path:
    path = tmp_path / "expectations.json"
    suite_file.write(Suite(path, expectations, 2.0, {"batches": 4}))
    return path


def test_the_file_is_sorted_and_stable(tmp_path):
    path = written(tmp_path, [RANGE, DTYPE])
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "expectations": [')
    assert json.loads(text)["expectations"][0]["kind"] == "dtype"  # sorted by identity
    again = written(tmp_path, [DTYPE, RANGE])
    assert again.read_text() == text
    assert suite_file.read(path).expectations == [DTYPE, RANGE]


@pytest.mark.parametrize(
    "text,line,words",
    [
        ('{\n  "format": 1,\n  "expectations": [\n  }\n', 4, "not valid JSON"),
        ('{\n  "expectations": [],\n  "format": 2\n}\n', 3, "newer mlsmoke (format 2"),
        ('{\n  "expectations": [],\n  "format": "one"\n}\n', 3, "format: expected"),
        ("[]\n", 1, "expected a JSON object"),
        (
            '{\n "format": 1,\n "expectations": [\n'
            '  {"kind": "dtype", "field": "x", "dtype": "int64"},\n'
            '  {"kind": "colour", "field": "x"}\n ]\n}\n',
            5,
            "kind: expected one of",
        ),
        (
            '{\n "format": 1,\n "expectations": [\n  {"kind": "dtype", "field": "x"}\n'
            " ]\n}\n",
            4,
            "needs 'dtype'",
        ),
    ],
    ids=["json", "newer", "format-type", "not-object", "unknown-kind", "missing-key"],
)
def test_a_bad_suite_is_a_config_error_naming_file_and_line(
    tmp_path, text, line, words
):
    path = tmp_path / "expectations.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        suite_file.read(path)
    assert str(raised.value).startswith(f"{path}:{line}: ")
    assert words in str(raised.value)


def test_a_missing_suite_says_how_to_record_one(tmp_path):
    with pytest.raises(ConfigError, match="run mlsmoke expect --record"):
        suite_file.read(tmp_path / "expectations.json")


def test_record_keeps_hand_edits_and_shows_the_diff():
    edited = {**RANGE, "max": 3.0}  # widened by a reviewer; digest left as recorded
    off = {**DTYPE, "off": True}
    new_range = with_digest({**RANGE, "max": 1.5, "from": "0..1.3"})
    shape = with_digest({"kind": "shape", "field": "x", "shape": ["B", 3], "from": "s"})
    merged, lines = merge([edited, off], [new_range, DTYPE, shape])
    assert edited in merged and off in merged and shape in merged
    assert new_range not in merged
    assert "= x value_range: kept, edited by hand" in lines
    assert "= x dtype: kept, edited by hand" in lines
    assert "+ x shape: shape=['B', 3]" in lines


def test_record_replaces_what_it_wrote_and_drops_what_no_longer_holds():
    new_range = with_digest({**RANGE, "max": 1.5})
    merged, lines = merge([RANGE, DTYPE], [new_range])
    assert merged == [new_range]
    assert "~ x value_range: max=1.2 min=-0.2 -> max=1.5 min=-0.2" in lines
    assert "- x dtype: dtype=float32" in lines
    assert merge([RANGE], [RANGE]) == ([RANGE], [])
