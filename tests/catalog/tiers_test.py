"""The same bug gets the same diagnosis at every tier: more steps and a stricter target
change the budget, not the reading of the curve."""

from __future__ import annotations

import pytest

from .cases import BUGS
from .runner import run_case

SAME_AT_EVERY_TIER = ["mlp-double-softmax", "mlp-lr-seven-decades-low"]


@pytest.mark.parametrize("name", SAME_AT_EVERY_TIER)
def test_a_bug_gets_the_same_code_at_the_commit_and_pr_tiers(name: str) -> None:
    case = next(case for case in BUGS if case.name == name)
    commit, pr = run_case(case, "commit"), run_case(case, "pr")
    assert pr.result.steps > commit.result.steps  # the pr tier really trained longer
    assert commit.code == pr.code == case.code, pr.result.diagnosis.summary
    assert case.says in pr.result.diagnosis.summary


def test_probes_cost_at_most_three_times_the_run() -> None:
    case = next(case for case in BUGS if case.name == "mlp-double-softmax")
    outcome = run_case(case, "pr")
    assert outcome.probe_steps and outcome.probe_cost <= 3.0
