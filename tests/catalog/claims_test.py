"""Each claim the gate makes is checked against the evidence it holds: the batch's
inventory before blaming the data, two differing shapes before a shape mismatch, a
tensor's identity across calls before calling it an unregistered parameter."""

from __future__ import annotations

import pytest
from mlsmoke.overfit.verdict.diagnoses import _errors, model_made_value

from .claims_cases import CASES
from .runner import run_case


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_claim_checked_against_the_evidence(case) -> None:
    outcome = run_case(case)
    result = outcome.result
    told = "\n".join([result.diagnosis.summary, *result.diagnosis.evidence])
    assert (outcome.code, outcome.warnings) == (case.code, case.warnings), told
    assert case.says in told
    assert result.verdict == "fail"
    assert result.diagnosis.evidence and result.diagnosis.suggestions


@pytest.mark.parametrize(
    "text, differ",
    [
        ("Using a target size (torch.Size([8])) that is different to the input size"
         " (torch.Size([8, 1])). This will likely lead to incorrect results", True),
        ("Implicit dimension choice for softmax has been deprecated. Change the call"
         " to include dim=X as an argument.", False),
        ("the size of the output (4, 3) matches the target (4, 3)", False),
        ("expected input of shape (2, 5), got (2, 5, 1)", True),
    ],
)  # fmt: skip
def test_only_two_differing_shapes_are_shape_evidence(text: str, differ: bool) -> None:
    assert _errors.names_differing_shapes(text) is differ


@pytest.mark.parametrize(
    "message, kind",
    [
        ("linear(): argument 'input' (position 1) must be Tensor, not str", "str"),
        ("expected Tensor as element 1 in argument 0, but got tuple", "tuple"),
        ("'list' object has no attribute 'dim'", "list"),
        ("conv2d() received an invalid combination of arguments", None),
        ("linear(): argument 'input' (position 1) must be Tensor, not NoneType", None),
    ],
)
def test_the_kind_of_value_an_error_names(message: str, kind: str | None) -> None:
    assert model_made_value.non_tensor_kind(message) == kind
