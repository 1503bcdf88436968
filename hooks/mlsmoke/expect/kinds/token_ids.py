"""Token ids stay within the vocabulary: an integer field that reached an embedding
lookup (``nn.Embedding``, ``F.embedding``) in the probe's forward of the gate's model
(``model_probe.py``) keeps its largest value below the table's number of rows.
Recorded only with the gate's ``model`` configured, and only when it held in every
recorded batch. Exact: an id at the table's size is out of bounds."""

from __future__ import annotations

from typing import Any

from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.mechanisms import token_ids_past_vocabulary
from mlsmoke.expect.model_widths import check_below, infer_below

KIND = "token_ids"
REQUIRED = ("field", "vocabulary")
ROLE = "token ids"


def infer(observed: Observed, factor: float) -> list[dict[str, Any]]:
    return infer_below(observed, ROLE, KIND, "vocabulary")


def check(expectation: dict[str, Any], observed: Observed) -> list[Failure]:
    return check_below(
        expectation, observed, ROLE, "vocabulary", token_ids_past_vocabulary
    )
