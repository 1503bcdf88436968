"""A suite file's example lines: the direct writer of a classifier's line writes
what the JSON encoder writes, for every float there is."""

from __future__ import annotations

import json
import random
import struct

import pytest

from mlsmoke.suites.example_lines import column_lines
from mlsmoke.suites.suite_file import example_line, number


def encoded(example: dict) -> str:
    """The line as the encoder writes it: 6-digit numbers, sorted keys."""
    rounded = {key: number(value) for key, value in example.items()}
    return json.dumps(rounded, sort_keys=True)


def classifier_example(loss: float, score: float = 1.0) -> dict:
    return {"index": 7, "hash": "0c1a67cdaf75f076", "label": 2, "prediction": 1,
            "loss": loss, "score": score}  # fmt: skip


def floats() -> list[float]:
    generator = random.Random(0)
    edges = [0.0, -0.0, 1.0, 0.5, 1 / 3, 1e-4, 1e-5, 99999.95, 999999.5, 1e15,
             1e16, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]  # fmt: skip
    bits = [struct.unpack("d", struct.pack("Q", generator.getrandbits(64)))[0]
            for _ in range(20000)]  # fmt: skip
    scaled = [generator.random() * 10.0 ** generator.randint(-12, 12)
              for _ in range(20000)]  # fmt: skip
    return [value for value in edges + bits + scaled if value == value]


def test_a_classifier_line_is_what_the_encoder_writes() -> None:
    for loss in floats():
        example = classifier_example(loss, -loss)
        assert example_line(example) == encoded(example), loss


def test_a_record_writes_each_line_from_its_columns_as_the_encoder_writes_it() -> None:
    losses = floats()
    scores = [-loss for loss in losses]
    indices = list(range(len(losses)))
    hashes = [f"{index:016x}" for index in indices]
    labels = [index % 3 for index in indices]
    predictions = [index % 5 for index in indices]
    lines = column_lines(indices, hashes, labels, predictions, losses, scores)
    assert list(lines) == indices
    for index, line in lines.items():
        example = {"index": index, "hash": hashes[index], "label": labels[index],
                   "prediction": predictions[index], "loss": losses[index],
                   "score": scores[index]}  # fmt: skip
        assert line == encoded(example) == example_line(example), losses[index]


@pytest.mark.parametrize(
    "column, value",
    [("loss", float("nan")), ("score", float("inf")), ("label", [1, 2]),
     ("label", None), ("hash", 'a"b'), ("prediction", True)],
)  # fmt: skip
def test_columns_with_a_value_that_is_not_plain_give_no_lines(column, value) -> None:
    columns = {"hash": ["0c1a67cdaf75f076"] * 3, "label": [2, 0, 1],
               "prediction": [1, 0, 1], "loss": [0.5, 0.25, 2.0],
               "score": [0.0, 1.0, 1.0]}  # fmt: skip
    columns[column][1] = value
    assert column_lines([0, 1, 2], columns["hash"], columns["label"],
                        columns["prediction"], columns["loss"],
                        columns["score"]) == {}  # fmt: skip
    assert column_lines([0, 2], columns["hash"], columns["label"],
                        columns["prediction"], columns["loss"],
                        columns["score"]).keys() == {0, 2}  # fmt: skip


@pytest.mark.parametrize(
    "example",
    [
        classifier_example(float("nan")),
        classifier_example(float("inf")),
        {**classifier_example(0.5), "label": [1, 2], "prediction": [1, 0]},
        {**classifier_example(0.5), "label": None, "prediction": None},
        {**classifier_example(0.5), "hash": 'a"b'},
        {**classifier_example(0.5), "label": True},
        {**classifier_example(0.5),
         "possible_label_issue": {"index": 7, "confidence": 0.91234567}},
    ],
)  # fmt: skip
def test_other_lines_go_through_the_encoder(example: dict) -> None:
    line = example_line(example)
    assert json.loads(line).keys() == example.keys()
    if "possible_label_issue" in example:
        assert '"confidence": 0.912346' in line
    else:
        assert line == encoded(example)
