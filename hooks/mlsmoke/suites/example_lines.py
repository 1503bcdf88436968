"""One example's line in a suite file, as the JSON encoder writes it with sorted keys
and numbers to 6 significant digits.

A classifier's example (int classes, finite float figures) is written directly, and
a record writes its examples' lines from the evaluation's columns in one pass
(:func:`column_lines`): the encoder's cost per line would be most of a record's.
Anything else goes through the encoder.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any

EXAMPLE_KEYS = ("index", "hash", "label", "prediction", "loss", "score")
EXAMPLE_KEY_SET = frozenset(EXAMPLE_KEYS)
_LINE = json.JSONEncoder(
    sort_keys=True
)  # one example per line; made once, not per line
_PLAIN_LINE = (
    '{"hash": "%s", "index": %d, "label": %d, "loss": %s, "prediction": %d,'
    ' "score": %s}'
)


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
        return _LINE.encode(example_json(example))
    return (
        f'{{"hash": "{example["hash"]}", "index": {example["index"]}, "label":'
        f' {example["label"]}, "loss": {_number_text(example["loss"])},'
        f' "prediction": {example["prediction"]}, "score":'
        f' {_number_text(example["score"])}}}'
    )


def _plain(example: dict[str, Any]) -> bool:
    """Only the six keys; int classes, finite float figures, and a hash that JSON
    writes as it is."""
    if example.keys() != EXAMPLE_KEY_SET:
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


def example_json(example: dict[str, Any]) -> dict[str, Any]:
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


def column_lines(
    indices: Sequence[int],
    hashes: Sequence[Any],
    labels: Sequence[Any],
    predictions: Sequence[Any],
    losses: Sequence[Any],
    scores: Sequence[Any],
) -> dict[int, str]:
    """The lines of the examples at ``indices``, made from an evaluation's columns
    (entry i of each is example i's); empty unless every one of them is a plain
    classifier example, which :func:`example_line` then writes one by one."""
    hash_of = [hashes[i] for i in indices]
    label_of = [labels[i] for i in indices]
    prediction_of = [predictions[i] for i in indices]
    loss_of = [losses[i] for i in indices]
    score_of = [scores[i] for i in indices]
    ints = {type(v) for column in (indices, label_of, prediction_of) for v in column}
    floats = set(map(type, loss_of)) | set(map(type, score_of))
    plain = (
        ints <= {int}
        and floats <= {float}
        and set(map(type, hash_of)) <= {str}
        and all(map(str.isascii, hash_of))
        and all(map(str.isalnum, hash_of))
        and all(map(math.isfinite, loss_of))
        and all(map(math.isfinite, score_of))
    )
    if not plain:
        return {}
    rows = zip(hash_of, indices, label_of, number_texts(loss_of), prediction_of,
               number_texts(score_of))  # fmt: skip
    return dict(zip(indices, map(_PLAIN_LINE.__mod__, rows)))


def number_texts(values: list[float]) -> list[str]:
    """_number_text of each of ``values`` (finite floats): "%.6g" is the encoder's
    text whenever it has a point and no exponent."""
    texts = [f"{value:.6g}" for value in values]
    return [t if "." in t and "e" not in t else _number_text_of(t) for t in texts]


@functools.lru_cache(maxsize=4096)  # scores of 0 and 1, round losses: few texts
def _number_text_of(text: str) -> str:
    return _number_text(float(text))
