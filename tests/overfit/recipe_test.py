"""The training recipe: the project's optimizer and scheduler are what trains, stepped
as Lightning's Trainer steps them on one batch, and lr probes scale all of it."""

from __future__ import annotations

import pytest
import torch
from overfit_models import MLP, mlp_batch, mlp_loss

from mlsmoke.overfit.training.engine import STALL_STEPS, train
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.optimizers import optimizer_factory
from mlsmoke.overfit.training.recipe import Recipe, as_recipe


def run(project, steps=4, lr=None, lr_scale=1.0, source="mypkg.train:make"):
    factory = optimizer_factory("adam", project, 5e-3, source)
    return train(MLP, mlp_batch, mlp_loss, factory, lr=lr, lr_scale=lr_scale,
                 max_steps=steps, target_loss=-1.0, target_ratio=None,
                 device="cpu", timeout=60, seed=0)  # fmt: skip


def halving(params):
    optimizer = torch.optim.SGD(params, lr=0.1)
    return optimizer, torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)


def test_the_scheduler_steps_after_every_update_and_each_lr_is_recorded():
    evidence = run(halving)
    assert evidence.error is None, evidence.user_traceback
    assert evidence.lrs == pytest.approx([0.1, 0.05, 0.025, 0.0125])
    assert (evidence.optimizer, evidence.scheduler) == ("SGD", "StepLR")
    assert evidence.optimizer_source.endswith("in halving, called by mypkg.train:make")


def test_lr_scale_scales_the_schedule_not_just_the_first_rate():
    evidence = run(halving, lr_scale=10.0)
    assert evidence.lrs == pytest.approx([1.0, 0.5, 0.25, 0.125])
    assert evidence.lr == pytest.approx(1.0) and evidence.lr_scale == 10.0


def test_an_explicit_lr_replaces_the_recipes_rate_and_the_schedule_follows():
    evidence = run(halving, lr=0.4)
    assert evidence.lrs == pytest.approx([0.4, 0.2, 0.1, 0.05])


def test_a_lambda_lr_at_zero_trains_at_zero_and_keeps_its_initial_lr():
    def warmup_stuck(params):
        optimizer = torch.optim.AdamW(params, lr=3e-3)
        return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.0)

    evidence = run(warmup_stuck)
    assert evidence.lr == 0.0 and set(evidence.lrs) == {0.0}
    assert evidence.unscheduled_lr == pytest.approx(3e-3)
    assert evidence.losses[0] == evidence.losses[-1]


def test_lightning_style_dicts_step_at_their_frequency():
    def every_other_step(params):
        optimizer = torch.optim.SGD(params, lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "epoch",
                             "frequency": 2},
        }  # fmt: skip

    assert run(every_other_step).lrs == pytest.approx([0.1, 0.1, 0.05, 0.05])


def plateau_recipe(**options):
    def on_plateau(params):
        optimizer = torch.optim.SGD(params, lr=0.1)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, patience=0, **options
        )
        return optimizer, scheduler

    return on_plateau


def test_a_plateau_scheduler_is_given_the_loss():
    # an improvement must beat the best loss by 10: none does, so the lr drops
    evidence = run(plateau_recipe(threshold=10.0, threshold_mode="abs"))
    assert evidence.error is None, evidence.user_traceback
    assert evidence.scheduler == "ReduceLROnPlateau"
    assert evidence.lrs == pytest.approx([0.1, 0.1, 0.01, 0.001])


def test_a_plateau_scheduler_in_mode_max_sees_a_falling_loss_as_progress():
    # it watches an accuracy: the loss it is given must improve the same way
    evidence = run(plateau_recipe(mode="max"))
    assert evidence.error is None, evidence.user_traceback
    assert evidence.losses[-1] < evidence.losses[0]
    assert evidence.lrs == pytest.approx([0.1, 0.1, 0.1, 0.1])


def test_the_built_in_recipe_names_itself():
    evidence = run(None, steps=1)
    assert evidence.optimizer_source == "built-in Adam"
    assert evidence.lrs == [5e-3] and evidence.scheduler is None


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("adam", "the optimizer callable returned a str, not a torch.optim"),
        ((torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1), 3),
         "the optimizer callable's scheduler is a int, not an object with .step()"),
    ],
)  # fmt: skip
def test_what_is_not_a_recipe_names_what_it_is(returned, message):
    with pytest.raises(ProjectProblem) as raised:
        as_recipe(returned, "mypkg:make")
    assert message in str(raised.value) and "(from mypkg:make)" in str(raised.value)
    assert raised.value.config_key == "optimizer"


def test_a_recipe_passes_through():
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1)
    recipe = Recipe(optimizer, source="configure_optimizers")
    assert as_recipe(recipe, "ignored") is recipe


def test_an_explicit_lr_keeps_a_schedule_stuck_at_zero_at_zero():
    def warmup_stuck(params):
        optimizer = torch.optim.SGD(params, lr=0.1)
        return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.0)

    evidence = run(warmup_stuck, lr=0.5)
    assert set(evidence.lrs) == {0.0} and evidence.unscheduled_lr == 0.5


def test_a_loss_that_never_changes_stops_the_run_early():
    def warmup_stuck(params):
        optimizer = torch.optim.SGD(params, lr=0.1)
        return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.0)

    evidence = run(warmup_stuck, steps=300)
    assert evidence.steps == STALL_STEPS and not evidence.reached
    assert len(set(evidence.losses)) == 1
