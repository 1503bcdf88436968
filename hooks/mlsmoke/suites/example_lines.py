"""One example's line in a suite file: a JSON array of its values, in the order of
the file's ``"columns"``, each float as printf's ``%.6g`` writes it (6 significant
digits: ``1``, ``0.5``, ``0.00548607``, ``1.23457e+06``; valid JSON, and the same
text on every machine for the same float), NaN and infinities as strings, mappings
with their keys sorted.

A record makes its examples' lines from the evaluation's columns in one pass
(:func:`column_lines`), one format call per line: a classifier's rows (int classes,
finite float figures) go straight into ``'[%d, "%s", %d, %d, %.6g, %.6g]'``; any
other row is written value by value (:func:`row_line`), to the same text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Union

COLUMNS = ("index", "hash", "label", "prediction", "loss", "score")
LABEL_ISSUE = "possible_label_issue"  # a column of the hard suite only
_PLAIN_LINE = '[%d, "%s", %d, %d, %.6g, %.6g]'
# Lines made already, by example index: a mapping, or a list of every example's.
Lines = Union[Mapping[int, str], Sequence[str]]


def number(value: Any) -> Any:
    """6 significant digits, so a re-record of the same model changes no line;
    NaN and infinities as strings, so the file stays standard JSON."""
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    if not math.isfinite(value):
        return str(value)
    return float(f"{value:.6g}")


def row_line(row: Sequence[Any]) -> str:
    """One example's line, from its values in the file's column order."""
    return "[" + ", ".join(map(value_text, row)) + "]"


def value_text(value: Any) -> str:
    """One value as the line writes it."""
    kind = type(value)
    if kind is float:
        return "%.6g" % value if math.isfinite(value) else f'"{value}"'
    if kind is int or kind is str or kind is bool or value is None:
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(value_text, value)) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=str)
        return "{" + ", ".join(
            f"{json.dumps(str(key))}: {value_text(value[key])}" for key in keys
        ) + "}"  # fmt: skip
    if isinstance(value, float):  # a subclass: numpy's float64
        return value_text(float(value))
    return json.dumps(value)


def column_lines(
    indices: Sequence[int],
    hashes: Sequence[Any],
    labels: Sequence[Any],
    predictions: Sequence[Any],
    losses: Sequence[Any],
    scores: Sequence[Any],
) -> Lines:
    """The lines of the examples at ``indices`` in a file of :data:`COLUMNS`, by
    index, made from an evaluation's columns (entry i of each is example i's; for
    ``indices`` of every example, the columns are used as they are, and the lines
    are a list)."""
    columns = [hashes, labels, predictions, losses, scores]
    every = indices == range(len(hashes))
    if not every:
        columns = [[column[i] for i in indices] for column in columns]
    line = _PLAIN_LINE.__mod__ if _plain(indices, *columns) else row_line
    lines = map(line, zip(indices, *columns))
    return list(lines) if every else dict(zip(indices, lines))


def _plain(
    indices: Sequence[Any],
    hashes: Sequence[Any],
    labels: Sequence[Any],
    predictions: Sequence[Any],
    losses: Sequence[Any],
    scores: Sequence[Any],
) -> bool:
    """Whether every row is a classifier's: int classes, finite floats, and a hash
    that JSON writes as it is (checked a column at a time, not a row)."""
    ints = set(map(type, indices)) | set(map(type, labels))
    ints |= set(map(type, predictions))
    joined = "".join(hashes) if set(map(type, hashes)) <= {str} else ""
    return (
        ints <= {int}
        and set(map(type, losses)) | set(map(type, scores)) <= {float}
        and joined.isascii()
        and joined.isalnum()
        and _finite(losses)
        and _finite(scores)
    )


def _finite(floats: Sequence[float]) -> bool:
    """Whether no float is NaN or infinite: each times zero is zero, or NaN when it
    is not (a sum of the products cannot overflow, as a sum of the floats can)."""
    return sum(map(_ZERO.__mul__, floats)) == 0.0


_ZERO = 0.0
