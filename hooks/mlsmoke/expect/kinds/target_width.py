"""A per-class target is as wide as the model's outputs: a float ``(B, C)`` field that
reached a loss as its target with the input's shape (one-hot or probability rows for
``F.cross_entropy``, multi-hot rows for ``F.binary_cross_entropy_with_logits``), in the
probe's forward of the gate's model (``model_probe.py``), keeps its last dimension
equal to the model's outputs. Recorded only with the gate's ``model`` configured."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.mechanisms import target_width_change
from mlsmoke.expect.model_widths import met, width_now

KIND = "target_width"
REQUIRED = ("field", "outputs")
ROLE = "per-class target"


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    found = []
    for name, (width, call) in met(observed, ROLE).items():
        columns = {shape[-1] for shape in observed.series(name, "shape") if shape}
        if not observed.everywhere(name) or columns != {width}:
            continue
        batches = len(observed.series(name, "shape"))
        seen = f"{width} columns in {batches} batches; {width} wide at {call}"
        found.append({"kind": KIND, "field": name, "outputs": width, "from": seen})
    return found


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    name, recorded = expectation["field"], expectation["outputs"]
    width = width_now(observed, ROLE, name, recorded)
    for index, figures in observed.figures(name):
        columns = figures["shape"][-1] if figures["shape"] else None
        if columns == width:
            continue
        return [
            Failure(
                name,
                KIND,
                f"{width} columns (the model's outputs, recorded {recorded})",
                f"{columns} columns",
                index,
                mechanism=target_width_change(width, recorded, columns),
            )
        ]
    return []
