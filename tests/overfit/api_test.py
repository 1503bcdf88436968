"""check() in the caller's process, and the pytest fixture."""

from __future__ import annotations

import random

import pytest
import step_functions
import torch
from bad_inputs import LogitsOnly
from overfit_models import MLP, TinyLM, lm_batch, mlp_batch, mlp_loss
from step_functions import forgot_zero_grad, takes_a_criterion, train_step

from mlsmoke.errors import ConfigError
from mlsmoke.overfit import check

pytest_plugins = ["pytester"]


def test_check_trains_a_copy_and_restores_the_rng():
    model = MLP()
    before = [p.detach().clone() for p in model.parameters()]
    torch.manual_seed(123)
    random.seed(123)
    expected = (torch.rand(1), random.random())
    torch.manual_seed(123)
    random.seed(123)
    result = check(model, mlp_batch(), mlp_loss)
    assert result.passed and result.gate == "check" and result.exit_code == 0
    assert (torch.rand(1), random.random()) == expected
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert torch.get_num_threads() >= 1


def test_check_takes_factories_and_options():
    result = check(TinyLM, lm_batch, optimizer="sgd", lr=0.5, max_steps=200)
    assert result.passed, result.report()
    failed = check(MLP, mlp_batch, mlp_loss, lr=1e-7, max_steps=3)
    assert not failed.passed and failed.steps == 3


def test_check_names_bad_arguments():
    with pytest.raises(ConfigError, match="check\\(\\).max-steps: expected a positive"):
        check(MLP(), mlp_batch(), mlp_loss, max_steps=0)
    with pytest.raises(ConfigError, match="model: expected a torch.nn.Module"):
        check("MLP", mlp_batch(), mlp_loss)
    result = check(LogitsOnly(), mlp_batch())
    assert result.exit_code == 2
    assert result.diagnosis.summary.startswith("check() argument loss:")


def test_check_calls_the_projects_step_as_the_step_key_does():
    result = check(step_functions.build, step_functions.batch, step=train_step)
    assert result.passed, result.report()
    assert "step: train_step(model, batch, optimizer), called once" in "\n".join(
        result.notes
    )
    named = check(
        step_functions.build, step_functions.batch, step="step_functions:train_step"
    )
    assert named.passed, named.report()


@pytest.mark.parametrize(
    "step",
    [forgot_zero_grad, "step_functions:forgot_zero_grad"],
    ids=["callable", "name"],
)
def test_a_step_that_forgets_zero_grad_fails_check(step):
    result = check(step_functions.build, step_functions.batch, step=step)
    assert (result.verdict, result.diagnosis.code) == (
        "fail",
        "step-gradients-accumulate",
    ), result.report()
    assert "optimizer.zero_grad() is never called" in result.report()


def test_check_names_a_bad_step():
    with pytest.raises(ConfigError, match='check\\(\\).step: expected "package'):
        check(MLP(), mlp_batch(), step="train_step")
    with pytest.raises(ConfigError, match="step: expected a callable or"):
        check(MLP(), mlp_batch(), step=3)
    missing = check(MLP(), mlp_batch(), step="no_such_module:train_step")
    assert missing.exit_code == 2
    assert missing.diagnosis.summary.startswith(
        "check() argument step: cannot import 'no_such_module'"
    ), missing.report()
    unbound = check(step_functions.build, step_functions.batch, step=takes_a_criterion)
    assert unbound.exit_code == 2
    assert unbound.diagnosis.summary.startswith("check() argument step:")
    assert "it takes 'criterion', which the gate cannot give" in unbound.report()


def test_the_pytest_fixture_passes_and_fails_with_the_report(pytester):
    pytester.makepyfile(test_memorize="""
        import torch
        from torch.nn import functional as F

        def batch():
            return torch.randn(8, 4, generator=torch.Generator().manual_seed(0)), (
                torch.arange(8) % 2)

        def loss(model, batch):
            return F.cross_entropy(model(batch[0]), batch[1])

        def test_memorizes(overfit):
            torch.manual_seed(0)  # the model's init, whatever ran before
            result = overfit(torch.nn.Linear(4, 2), batch(), loss, target_ratio=0.5)
            assert result.passed

        def test_frozen_model_fails(overfit):
            model = torch.nn.Linear(4, 2).requires_grad_(False)
            overfit(model, batch(), loss)
        """)
    result = pytester.runpytest()  # the plugin loads through its pytest11 entry point
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*overfit check: FAIL*"])
