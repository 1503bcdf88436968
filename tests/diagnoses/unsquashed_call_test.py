"""An output squashed by a call in forward (``torch.sigmoid(x)``, ``Tensor.tanh``,
``F.softmax``) that cannot reach the targets' range is named as ``not-learning``
only when a copy whose call returns its input memorizes; twins whose targets lie in
the call's range pass and run no intervention."""

from __future__ import annotations

import bounded_output_models as m
import pytest

from catalog.cases import Case
from catalog.runner import Outcome, run_case

REGRESSOR, MIXTURE = "tabular regressor", "mixture-weight head"


def report(outcome: Outcome) -> str:
    return outcome.result.report()


@pytest.mark.parametrize(
    ("model", "batch", "call"),
    [(m.regressor_calling_sigmoid, m.standardized_prices, "torch.sigmoid"),
     (m.regressor_calling_tanh, m.standardized_prices, "Tensor.tanh"),
     (m.MixtureHead, m.component_scores, "F.softmax")],
)  # fmt: skip
def test_a_squashing_call_on_targets_past_its_range_is_named_and_checked(
    model, batch, call
):
    bug = run_case(Case(call, REGRESSOR, model, batch, loss=m.squared_error))
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert f"the output passes through {call} (called in" in text
    assert (
        f"(checked: with {call} in forward returning its input the batch is"
        " memorized in" in text
    )


@pytest.mark.parametrize(
    ("model", "batch"),
    [(m.regressor_calling_sigmoid, m.prices_in_the_unit_range),
     (m.MixtureHead, m.component_shares)],
)  # fmt: skip
def test_the_same_call_on_targets_in_its_range_passes(model, batch):
    twin = run_case(Case("in-range", MIXTURE, model, batch, loss=m.squared_error))
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []  # interventions run only on failure
