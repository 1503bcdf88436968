"""A suite file's example lines: the fast writer of a classifier's lines writes what
the value-by-value writer writes, for every float there is, and every line is JSON
that reads back as the example's values to 6 significant digits."""

from __future__ import annotations

import json
import random
import struct

import pytest

from mlsmoke.suites.example_lines import _plain, column_lines, row_line, value_text


def floats() -> list[float]:
    generator = random.Random(0)
    edges = [0.0, -0.0, 1.0, 0.5, 1 / 3, 1e-4, 1e-5, 99999.95, 999999.5, 1e15,
             1e16, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]  # fmt: skip
    bits = [struct.unpack("d", struct.pack("Q", generator.getrandbits(64)))[0]
            for _ in range(20000)]  # fmt: skip
    scaled = [generator.random() * 10.0 ** generator.randint(-12, 12)
              for _ in range(20000)]  # fmt: skip
    return [value for value in edges + bits + scaled if value == value]


def test_a_record_writes_each_line_from_its_columns_as_row_line_writes_it() -> None:
    losses = floats()
    scores = [-loss for loss in losses]
    indices = list(range(len(losses)))
    hashes = [f"{index:016x}" for index in indices]
    labels = [index % 3 for index in indices]
    predictions = [index % 5 for index in indices]
    lines = column_lines(indices, hashes, labels, predictions, losses, scores)
    assert list(lines) == indices
    every = column_lines(range(len(losses)), hashes, labels, predictions, losses,
                         scores)  # fmt: skip
    assert every == list(lines.values())  # every example: a list, by index
    for index, line in lines.items():
        row = (index, hashes[index], labels[index], predictions[index],
               losses[index], scores[index])  # fmt: skip
        assert line == row_line(row), losses[index]
        back = json.loads(line)
        assert back[:4] == list(row[:4])
        loss = losses[index]
        if abs(loss) < 1e308:  # 6 digits of the largest double round past it
            assert back[4] == float(f"{loss:.6g}") and back[5] == -back[4], loss


def test_a_line_is_six_significant_digits() -> None:
    assert row_line([4, "5d08808aecb9da09", 1, 1, 0.005486071234, 1.0]) == (
        '[4, "5d08808aecb9da09", 1, 1, 0.00548607, 1]'
    )
    assert value_text(1234567.0) == "1.23457e+06" and value_text(-0.0) == "-0"


@pytest.mark.parametrize(
    "column, value",
    [("loss", float("nan")), ("score", float("inf")), ("label", [1, 2]),
     ("label", None), ("hash", 'a"b'), ("prediction", True)],
)  # fmt: skip
def test_columns_with_a_value_that_is_not_plain_are_written_value_by_value(
    column, value
) -> None:
    columns = {"hash": ["0c1a67cdaf75f076"] * 3, "label": [2, 0, 1],
               "prediction": [1, 0, 1], "loss": [0.5, 0.25, 2.0],
               "score": [0.0, 1.0, 1.0]}  # fmt: skip
    columns[column][1] = value
    lines = column_lines([0, 1, 2], columns["hash"], columns["label"],
                         columns["prediction"], columns["loss"],
                         columns["score"])  # fmt: skip
    back = json.loads(lines[1])
    expected = str(value) if isinstance(value, float) else value
    assert back[["index", "hash", "label", "prediction", "loss",
                 "score"].index(column)] == expected  # fmt: skip
    assert lines[0] == '[0, "0c1a67cdaf75f076", 2, 1, 0.5, 0]'


def test_a_label_issue_hint_is_written_with_sorted_keys() -> None:
    hint = {"index": 7, "confidence": 0.91234567, "position": None}
    line = row_line([7, "0c1a67cdaf75f076", 2, 1, 0.5, 0.0, hint])
    assert line.endswith('{"confidence": 0.912346, "index": 7, "position": null}]')
    assert json.loads(line)[6] == {"confidence": 0.912346, "index": 7,
                                   "position": None}  # fmt: skip


def test_the_fast_writer_takes_every_finite_float_and_no_other() -> None:
    """The lines above were made by the fast writer, not the fallback: its check
    takes every finite float (a sum of them would overflow) and refuses NaN and
    the infinities wherever they stand."""
    losses = floats()
    count = len(losses)
    hashes = [f"{index:016x}" for index in range(count)]
    columns = (range(count), hashes, [0] * count, [1] * count)
    assert _plain(*columns, losses, losses)
    for bad in (float("nan"), float("inf"), float("-inf")):
        for at in (0, count // 2, count - 1):
            spoiled = losses[:at] + [bad] + losses[at + 1 :]
            assert not _plain(*columns, losses, spoiled), (bad, at)
    assert not _plain(*columns[:1], ["5d08808aecb9da0!"] + hashes[1:], *columns[2:],
                      losses, losses)  # fmt: skip
