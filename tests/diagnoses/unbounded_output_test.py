"""A squashed output that cannot reach the targets' range is named as
``not-learning`` only when a copy without the squashing module memorizes; a
correct twin passes and runs no intervention."""

from __future__ import annotations

import bounded_output_models as m

from catalog.cases import Case
from catalog.runner import Outcome, run_case

REGRESSOR = "tabular regressor"


def report(outcome: Outcome) -> str:
    return outcome.result.report()


def test_a_tanh_on_standardized_targets_is_named_and_checked():
    bug = run_case(
        Case("tanh-prices", REGRESSOR, m.tanh_regressor, m.standardized_prices,
             loss=m.squared_error)  # fmt: skip
    )
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert "the output passes through Tanh (3)" in text
    assert "(checked: with the output's Tanh (3) removed the batch is memorized in" in (
        text
    )


def test_the_same_regressor_without_tanh_passes():
    twin = run_case(
        Case("prices", REGRESSOR, m.plain_regressor, m.standardized_prices,
             loss=m.squared_error)  # fmt: skip
    )
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []


def test_a_sigmoid_with_targets_in_its_range_passes():
    twin = run_case(
        Case("sigmoid-unit-prices", REGRESSOR, m.sigmoid_regressor,
             m.prices_in_the_unit_range, loss=m.squared_error)  # fmt: skip
    )
    assert twin.code == "memorized", report(twin)
    assert "removed" not in report(twin)
