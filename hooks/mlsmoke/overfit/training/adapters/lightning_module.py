"""A ``model`` callable that returns a LightningModule (``training_step`` and
``configure_optimizers``): its loss is ``training_step(batch, 0)``, and its optimizer
and schedulers are what ``configure_optimizers()`` returns.

``self.log`` outside a Trainer only warns; those warnings are kept from the user's
output, and the first step's are shown with ``-v``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from mlsmoke.overfit.training.adapters.configure_optimizers import (
    ONE_LOSS_ONE_OPTIMIZER,
    SOURCE,
    normalize,
)
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.recipe import Recipe, as_recipe

LIGHTNING_METHODS = ("training_step", "configure_optimizers")


def is_lightning_module(model: Any) -> bool:
    return all(callable(getattr(model, name, None)) for name in LIGHTNING_METHODS)


def check_automatic_optimization(model: Any) -> None:
    """ProjectProblem unless Lightning would optimize ``model`` itself."""
    if getattr(model, "automatic_optimization", True) is False:
        raise ProjectProblem(
            "manual-optimization",
            f"{type(model).__name__} sets automatic_optimization = False: its"
            " training_step steps its own optimizers, which the gate cannot see;"
            f" {ONE_LOSS_ONE_OPTIMIZER}",
            config_key="loss",
        )


def configure_optimizers_recipe(model: Any, lr: float | None) -> Recipe:
    """The recipe factory of a LightningModule: ``(model, lr) -> Recipe`` from its
    own ``configure_optimizers()``; ``lr`` (the lr key) replaces its rate."""
    recipe = recipe_of(model.configure_optimizers())
    if lr is not None:
        recipe.override_lr(lr)
    return recipe


def recipe_of(returned: Any) -> Recipe:
    """The Recipe in what ``configure_optimizers()`` returned; ProjectProblem (a
    config error on ``optimizer``) when the gate cannot train it."""
    project = normalize(returned)
    if len(project.schedules) > 1:
        names = ", ".join(type(s.scheduler).__name__ for s in project.schedules)
        raise ProjectProblem(
            "several-schedulers",
            f"configure_optimizers() returned {len(project.schedules)} schedulers"
            f" ({names}) for one optimizer; the gate steps one, so"
            f" {ONE_LOSS_ONE_OPTIMIZER}",
            config_key="optimizer",
        )
    conf: dict[str, Any] = {"optimizer": project.optimizer}
    for schedule in project.schedules:
        conf["lr_scheduler"] = {
            "scheduler": schedule.scheduler,
            "interval": schedule.interval,
            "frequency": schedule.frequency,
        }
    return as_recipe(conf, SOURCE)


class TrainingStepLoss:
    """``loss(model, batch)`` = ``model.training_step(batch, 0)``'s loss; the warnings
    of the first call are kept in ``warned``."""

    def __init__(self) -> None:
        self.warned: list[str] = []
        self._first = True

    def __call__(self, model: Any, batch: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always" if self._first else "ignore")
            output = model.training_step(batch, 0)
        if self._first:
            self._first = False
            for warning in caught:
                text = _first_sentence(str(warning.message))
                if text not in self.warned:
                    self.warned.append(text)
        return step_loss(output)


def step_loss(output: Any) -> Any:
    """The loss in what ``training_step`` returned: a tensor or a mapping with
    ``"loss"``."""
    if isinstance(output, Mapping):
        if "loss" not in output:
            keys = ", ".join(map(str, output))
            raise ProjectProblem(
                "loss-not-found",
                f'training_step returned a mapping without "loss" (keys: {keys});'
                ' Lightning trains on output["loss"]',
                config_key="loss",
            )
        return output["loss"]
    if output is None:
        raise ProjectProblem(
            "loss-not-found",
            "training_step returned None, which tells Lightning to skip the batch;"
            " the gate has nothing to train on",
            config_key="loss",
        )
    return output


def _first_sentence(text: str, limit: int = 120) -> str:
    sentence = (text.strip().splitlines() or [""])[0].split(". ")[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."
