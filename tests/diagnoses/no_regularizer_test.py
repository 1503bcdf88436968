"""An extra term added to the loss with a weight (an L2 penalty on the weights, a
penalty on the logits' size, a confidence penalty: the predictions' negative entropy)
that floors the loss is named as ``not-learning`` only when a copy whose loss leaves
the term out memorizes; the same losses with a small weight pass and run no
intervention."""

from __future__ import annotations

import re

import pytest
import regularizer_models as m

from catalog.cases import Case
from catalog.runner import Outcome, run_case

CASES = [
    (m.regressor, m.prices, m.with_l2_penalty, "batch[1]"),
    (m.TokenClassifier, m.token_batch, m.with_logit_penalty, "label"),
    (m.TokenClassifier, m.token_batch, m.with_confidence_penalty, "label"),
]
# heavy, light: the penalty's own weights (a confidence penalty is bounded)
WEIGHTS = {m.with_confidence_penalty: (2.0, 0.01)}


def report(outcome: Outcome) -> str:
    return outcome.result.report()


@pytest.mark.parametrize(("model", "batch", "loss", "targets"), CASES)
def test_a_heavy_regularizer_is_named_and_checked(model, batch, loss, targets):
    heavy = WEIGHTS.get(loss, (1.0, 1e-5))[0]
    bug = run_case(Case("heavy", "regularized", model, batch, loss=loss(heavy)))
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert "a term of the loss that the targets do not move" in text
    assert f"with the targets ({targets}) paired with other samples" in text
    assert "(checked: with the regularizer's weight 0 the batch is memorized in" in text
    assert re.search(r"\(added at \S*regularizer_models\.py:\d+: return ", text)


def test_a_confidence_penalty_that_makes_the_loss_negative_is_the_cause():
    """A heavy weight on the negative entropy makes the loss negative at init; that
    is the penalty's doing, not a flipped objective: the data's term is positive."""
    loss = m.with_confidence_penalty(2.0)
    bug = run_case(
        Case("heavy", "confident", m.TokenClassifier, m.token_batch, loss=loss)
    )
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert "makes it negative, where no target-ratio of it means anything" in text
    assert "return data + weight * negative_entropy" in text
    assert "(checked: with the regularizer's weight 0 the batch is memorized in" in text


@pytest.mark.parametrize(("model", "batch", "loss", "targets"), CASES)
def test_a_light_regularizer_passes(model, batch, loss, targets):
    light = WEIGHTS.get(loss, (1.0, 1e-5))[1]
    twin = run_case(Case("light", "regularized", model, batch, loss=loss(light)))
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []  # interventions run only on failure


INSIDE_MODEL = [
    # nanoGPT's shape: forward(ids, label) returns (logits, loss)
    (m.ClassifierWithLoss, m.token_batch, (1.0, 1e-5), "keeps it above the target"),
    # Hugging Face's: forward(ids, labels=...) returns an output with .loss
    (
        m.ConfidentClassifier,
        m.token_batch_with_labels,
        (2.0, 0.01),
        "makes it negative",
    ),
]


@pytest.mark.parametrize(("model", "batch", "weights", "says"), INSIDE_MODEL)
def test_a_heavy_penalty_inside_forward_is_named_and_checked(
    model, batch, weights, says
):
    """No loss callable: the model's forward adds the penalty to its own loss, and
    the copy's forward leaves it out."""
    bug = run_case(Case("heavy", "self-loss", lambda: model(weights[0]), batch))
    assert bug.code == "not-learning", report(bug)
    text = report(bug)
    assert says in text
    assert "the model's loss is a sum of two terms (added at " in text
    assert "regularizer_models.py:" in text
    assert "(checked: with the regularizer's weight 0 the batch is memorized in" in text


@pytest.mark.parametrize(("model", "batch", "weights", "says"), INSIDE_MODEL)
def test_a_light_penalty_inside_forward_passes(model, batch, weights, says):
    twin = run_case(Case("light", "self-loss", lambda: model(weights[1]), batch))
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []
