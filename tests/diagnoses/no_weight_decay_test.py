"""A weight decay the batch's loss cannot outweigh is named as ``not-learning`` only
when a copy with weight_decay 0 memorizes; the usual decay passes and runs no
intervention."""

from __future__ import annotations

import bounded_output_models as m

from catalog.cases import Case
from catalog.runner import Outcome, run_case

REGRESSOR = "tabular regressor"


def report(outcome: Outcome) -> str:
    return outcome.result.report()


def _regressor(weight_decay: float) -> Outcome:
    return run_case(
        Case(f"prices-decay-{weight_decay:g}", REGRESSOR, m.plain_regressor,
             m.standardized_prices, loss=m.squared_error,
             optimizer=m.adamw(weight_decay))  # fmt: skip
    )


def test_a_decay_far_above_the_usual_is_named_and_checked():
    bug = _regressor(20.0)
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert "weight_decay 20 keeps the loss above the target" in text
    assert "(checked: with weight_decay 0 the batch is memorized in" in text


def test_the_usual_decay_passes():
    twin = _regressor(0.01)
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []
