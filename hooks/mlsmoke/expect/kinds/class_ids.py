"""Class ids stay below the model's outputs: an integer field that reached a
classification loss (``F.cross_entropy``, ``F.nll_loss``) as its target, in the
probe's forward of the gate's model (``model_probe.py``), keeps its largest value below
the loss input's number of classes. Recorded only with the gate's ``model``
configured, and only when it held in every recorded batch. Exact: no margin, since a
class id at the width is out of bounds for the loss."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.mechanisms import class_ids_past_outputs
from mlsmoke.expect.model_widths import check_below, infer_below

KIND = "class_ids"
REQUIRED = ("field", "outputs")
ROLE = "class ids"


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    return infer_below(observed, ROLE, KIND, "outputs")


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    return check_below(expectation, observed, ROLE, "outputs", class_ids_past_outputs)
