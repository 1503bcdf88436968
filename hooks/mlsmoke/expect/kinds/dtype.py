"""A field keeps its dtype exactly."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.mechanisms import dtype_change

KIND = "dtype"
REQUIRED = ("field", "dtype")


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name in observed.field_names():
        dtypes = set(observed.series(name, "dtype"))
        if observed.everywhere(name) and len(dtypes) == 1:
            dtype = dtypes.pop()
            found.append(
                {
                    "kind": KIND,
                    "field": name,
                    "dtype": dtype,
                    "from": f"{dtype} in every batch",
                }
            )
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, dtype = expectation["field"], expectation["dtype"]
    for index, figures in observed.figures(name):
        if figures["dtype"] != dtype:
            return [
                Failure(
                    name,
                    KIND,
                    dtype,
                    figures["dtype"],
                    index,
                    mechanism=dtype_change(dtype, figures["dtype"]),
                )
            ]
    return []
