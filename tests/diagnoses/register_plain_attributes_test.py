"""Layers in a plain list and bare trainable tensors are named as
``unregistered-parameters`` only when a copy with them registered memorizes the
batch; a correct twin passes and runs no intervention."""

from __future__ import annotations

import registration_models as m
import torch

from catalog.cases import Case
from catalog.runner import Outcome, run_case
from mlsmoke.overfit.verdict.interventions.register_plain_attributes import (
    CHANGE,
    register_plain_attributes,
)

MOE, RECOMMENDER = "mixture of experts", "matrix factorization"
CHECKED = f"(checked: {CHANGE} the batch is memorized in"


def report(outcome: Outcome) -> str:
    return outcome.result.report()


def test_experts_in_a_plain_list_are_named_and_checked():
    bug = run_case(
        Case("moe-list", MOE, m.experts_in_a_list, m.features, loss=m.classify)
    )
    assert bug.code == "unregistered-parameters", report(bug)
    assert "experts[3].0.weight" in report(bug)
    assert f"nn.ModuleList / nn.ModuleDict, not a Python list or dict  {CHECKED}" in (
        report(bug)
    )


def test_experts_in_a_module_list_pass():
    twin = run_case(Case("moe", MOE, m.MixtureOfExperts, m.features, loss=m.classify))
    assert twin.code == "memorized", report(twin)
    assert twin.probe_steps == []  # interventions run only on failure


def test_bare_embedding_tables_are_named_and_checked():
    bug = run_case(
        Case("mf-bare", RECOMMENDER, m.bare_tables, m.ratings,
             loss=m.squared_error, options={"lr": 0.05})  # fmt: skip
    )
    assert bug.code == "unregistered-parameters", report(bug)
    assert "wrap bare trainable tensors in nn.Parameter" in report(bug)
    assert CHECKED in report(bug).split("wrap bare trainable tensors", 1)[1]
    twin = run_case(
        Case("mf", RECOMMENDER, m.Recommender, m.ratings, loss=m.squared_error,
             options={"lr": 0.05})  # fmt: skip
    )
    assert twin.code == "memorized", report(twin)


def test_registering_keeps_what_forward_reads():
    model = m.bare_tables()
    users, items, _ = m.ratings()
    before = model(users, items)
    assert register_plain_attributes(model) == 2
    assert torch.equal(model(users, items), before)
    assert {"users", "items", "bias"} <= dict(model.named_parameters()).keys()
    assert register_plain_attributes(model) == 0  # nothing is left to register


def test_a_list_of_registered_layers_is_not_registered_again():
    model = m.MixtureOfExperts()
    model.shortcut = [model.router]  # a second name for a registered layer
    assert register_plain_attributes(model) == 0
