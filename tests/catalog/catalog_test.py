"""The catalog through the gate: every correct model passes, every bug fails with its
diagnosis code, and every warning shows (``benchmarks/bench_catalog.py`` prints it)."""

from __future__ import annotations

import pytest

from .cases import BUGS, CASES, CORRECT, WARNINGS, Case
from .runner import run_case

ARCHITECTURES = {"MLP", "CNN", "GRU", "LSTM", "transformer LM", "HF-style (**batch)"}
CODES = {
    "data-error",
    "shape-error",
    "label-range-error",
    "out-of-memory",
    "non-finite",
    "no-gradient",
    "lr-too-high",
    "lr-too-low",
    "wrong-objective",
    "not-learning",
    "too-slow",
    "nondeterministic-batch",
    "optimizer-mismatch",
    "unregistered-parameters",
}
WARNING_CODES = {
    "init-loss",
    "degenerate-batch",
    "batch-mixing",
    "dropout-active",
    "frozen-parameters",
    "unregistered-parameters",
}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_catalog_case(case: Case) -> None:
    outcome = run_case(case)
    result = outcome.result
    if case.kind == "bug":
        assert result.verdict == "fail", result.diagnosis
    assert (outcome.code, outcome.warnings) == (
        case.code,
        case.warnings,
    ), f"{case.bug}: {result.diagnosis.summary}"
    assert result.diagnosis.summary
    told = "\n".join([result.diagnosis.summary, *result.diagnosis.evidence])
    assert case.says in told
    if case.kind == "bug":
        assert result.diagnosis.evidence and result.diagnosis.suggestions


def test_catalog_covers_every_code_warning_and_architecture() -> None:
    assert len(BUGS) >= 20 and len(CORRECT) >= 8
    assert {case.code for case in BUGS} == CODES
    assert set().union(*(case.warnings for case in CASES)) == WARNING_CODES
    assert ARCHITECTURES <= {case.architecture for case in BUGS}
    assert ARCHITECTURES <= {case.architecture for case in CORRECT}
    assert all(case.kind == "warning" for case in WARNINGS)
    assert len({case.name for case in CASES}) == len(CASES)
