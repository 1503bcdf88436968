"""An optimizer callable that takes the model trains the model's own recipe, and the
lr hint names the line of the project's code that built the optimizer."""

from __future__ import annotations

import sys

import lightning
import pytest
import torch
from overfit_models import MLP, mlp_batch, mlp_loss

from mlsmoke.overfit.api import check
from mlsmoke.overfit.training.construction import optimizer_construction, takes_model
from mlsmoke.overfit.training.engine import train
from mlsmoke.overfit.training.optimizers import optimizer_factory


def by_params(params):
    return torch.optim.SGD(params, lr=0.1)


def by_model(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)


def annotated(m: torch.nn.Module):
    return torch.optim.SGD(m.parameters(), lr=0.1)


def annotated_as_text(m: "nn.Module"):  # noqa: F821 (a forward reference)
    return torch.optim.SGD(m.parameters(), lr=0.1)


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (by_params, False),
        (by_model, True),
        (annotated, True),
        (annotated_as_text, True),
        (lambda parameters: None, False),
        (lambda net: None, True),
        (lambda gpt_model, lr=1e-3: None, True),
        (lambda: None, False),
        (print, False),
    ],
)
def test_a_factory_takes_the_model_when_its_first_parameter_says_so(factory, expected):
    assert takes_model(factory) is expected


class WithRecipe(MLP):
    """A plain module that carries its own recipe, as nanoGPT's GPT does."""

    def configure_optimizers(self, weight_decay, learning_rate):
        decay = [p for p in self.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.parameters() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate)  # the construction line


CONSTRUCTION_LINE = next(
    number
    for number, line in enumerate(open(__file__, encoding="utf-8"), 1)
    if "# the construction line" in line and "AdamW" in line
)


def gate_optimizer(model):
    return model.configure_optimizers(0.1, 6e-7)


def test_the_models_own_recipe_trains_with_its_parameter_groups():
    factory = optimizer_factory("adam", gate_optimizer, 1e-3, "gate:optimizer")
    evidence = train(WithRecipe, mlp_batch, mlp_loss, factory, lr=None, lr_scale=1.0,
                     max_steps=2, target_loss=-1.0, target_ratio=None,
                     device="cpu", timeout=60, seed=0)  # fmt: skip
    assert evidence.error is None, evidence.user_traceback
    assert evidence.optimizer == "AdamW" and evidence.lr == pytest.approx(6e-7)
    assert evidence.weight_decay == pytest.approx(0.1)
    assert evidence.optimizer_source == (
        f"tests/overfit/optimizer_site_test.py:{CONSTRUCTION_LINE}"
        " in configure_optimizers, called by gate:optimizer"
    )


def test_a_recipe_with_a_rate_too_low_is_blocked_naming_the_construction_line():
    result = check(WithRecipe, mlp_batch, mlp_loss, optimizer=gate_optimizer,
                   device="cpu", max_steps=150)  # fmt: skip
    assert result.diagnosis.code == "lr-too-low", result.report()
    where = f"optimizer_site_test.py:{CONSTRUCTION_LINE} in configure_optimizers"
    assert any(where in fix for fix in result.diagnosis.suggestions), result.report()


class LitWithRecipe(lightning.LightningModule):
    """A LightningModule whose configure_optimizers sets a rate far too low."""

    def __init__(self):
        super().__init__()
        self.net = MLP()

    def training_step(self, batch, batch_idx):
        return mlp_loss(self.net, batch)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=6e-7)  # lightning's line


def make_adamw(params):
    return torch.optim.AdamW(params, lr=6e-7)  # the helper's line


class LitWithHelper(LitWithRecipe):
    """The same, with the optimizer built by a helper of the project."""

    def configure_optimizers(self):
        return make_adamw(self.parameters())


@pytest.mark.parametrize(
    ("module", "marker", "where"),
    [
        (LitWithRecipe, "# lightning's line", "configure_optimizers at {site}"),
        (
            LitWithHelper,
            "# the helper's line",
            "{site} in make_adamw, called by configure_optimizers",
        ),
    ],
    ids=["in-configure-optimizers", "in-a-helper"],
)
def test_a_lightning_rate_too_low_is_blocked_naming_the_construction_line(
    module, marker, where
):
    result = check(module, mlp_batch, device="cpu", max_steps=150)
    assert result.diagnosis.code == "lr-too-low", result.report()
    line = next(
        number
        for number, text in enumerate(open(__file__, encoding="utf-8"), 1)
        if marker in text and "AdamW" in text
    )
    site = where.format(site=f"tests/overfit/optimizer_site_test.py:{line}")
    assert any(
        fix.startswith("raise the lr to about ") and f" in {site}, " in fix
        for fix in result.diagnosis.suggestions
    ), (site, result.report())


def test_the_site_is_the_first_frame_outside_torch_and_mlsmoke():
    with optimizer_construction() as site:
        torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])  # here
        torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    assert site.path.endswith("optimizer_site_test.py")
    assert site.function == sys._getframe().f_code.co_name
    assert torch.optim.Optimizer.__init__.__qualname__ == "Optimizer.__init__"


def test_a_factory_that_builds_the_optimizer_itself_is_named_with_its_line():
    factory = optimizer_factory("adam", by_model, 1e-3, "gate:by_model")
    evidence = train(MLP, mlp_batch, mlp_loss, factory, lr=None, lr_scale=1.0,
                     max_steps=1, target_loss=-1.0, target_ratio=None,
                     device="cpu", timeout=60, seed=0)  # fmt: skip
    line = by_model.__code__.co_firstlineno + 1
    assert evidence.optimizer_source == (
        f"gate:by_model at tests/overfit/optimizer_site_test.py:{line}"
    )
