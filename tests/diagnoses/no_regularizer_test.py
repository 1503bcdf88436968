"""An extra term added to the loss with a weight (an L2 penalty on the weights, a
penalty on the logits' size) that floors the loss is named as ``not-learning`` only
when a copy whose loss leaves the term out memorizes; the same losses with a small
weight pass and run no intervention."""

from __future__ import annotations

import pytest
import regularizer_models as m

from catalog.cases import Case
from catalog.runner import Outcome, run_case

CASES = [
    (m.regressor, m.prices, m.with_l2_penalty, "batch[1]"),
    (m.TokenClassifier, m.token_batch, m.with_logit_penalty, "label"),
]


def report(outcome: Outcome) -> str:
    return outcome.result.report()


@pytest.mark.parametrize(("model", "batch", "loss", "targets"), CASES)
def test_a_heavy_regularizer_is_named_and_checked(model, batch, loss, targets):
    bug = run_case(Case("heavy", "regularized", model, batch, loss=loss(1.0)))
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert "a term of the loss that the targets do not move" in text
    assert f"with the targets ({targets}) paired with other samples" in text
    assert "(checked: with the regularizer's weight 0 the batch is memorized in" in text


@pytest.mark.parametrize(("model", "batch", "loss", "targets"), CASES)
def test_a_light_regularizer_passes(model, batch, loss, targets):
    twin = run_case(Case("light", "regularized", model, batch, loss=loss(1e-5)))
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []  # interventions run only on failure
