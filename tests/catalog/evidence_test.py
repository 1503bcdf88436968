"""The evidence catalog through the gate: each bug gets its code from what the batch,
the optimizer and the autograd graph show, whatever the error said."""

from __future__ import annotations

import pytest

from .evidence_cases import CASES
from .runner import run_case


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_evidence_case(case) -> None:
    outcome = run_case(case)
    result = outcome.result
    told = "\n".join([result.diagnosis.summary, *result.diagnosis.evidence])
    assert (outcome.code, outcome.warnings) == (case.code, case.warnings), told
    assert case.says in told
    if case.kind == "bug" and case.code != "config-error":
        assert result.diagnosis.evidence and result.diagnosis.suggestions
