"""A ``model`` callable that returns a LightningModule (``training_step`` and
``configure_optimizers``), trained as Lightning's fit loop trains it: the module is
built, then ``configure_model()`` adds its layers; its loss is
``training_step(batch, 0)`` (or ``training_step(batch)``, when that is its signature);
its optimizer and schedulers are what ``configure_optimizers()`` returns, and the
schedulers step through ``lr_scheduler_step``.

``self.log`` outside a Trainer only warns; those warnings are kept from the user's
output, and the first step's are shown with ``-v``. What needs a real Trainer
(``self.trainer``, ``self.lr_schedulers()``) is a config error: the gate cannot run it.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from mlsmoke.overfit.training.adapters.configure_optimizers import (
    ONE_LOSS_ONE_OPTIMIZER,
    SOURCE,
    normalize,
)
from mlsmoke.overfit.training.construction import (
    built_where,
    optimizer_construction,
)
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.recipe import Recipe, as_recipe

LIGHTNING_METHODS = ("training_step", "configure_optimizers")
LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning", "lightning_fabric")
# The LightningModule properties that exist only while a Trainer runs it.
TRAINER_ONLY = ("trainer",)


def is_lightning_module(model: Any) -> bool:
    return all(callable(getattr(model, name, None)) for name in LIGHTNING_METHODS)


def overrides(instance: Any, name: str) -> bool:
    """Whether ``instance``'s class defines ``name`` itself, rather than inheriting
    Lightning's default: the first class in its MRO that holds it is not Lightning's."""
    for cls in type(instance).__mro__:
        if name in vars(cls):
            package = (cls.__module__ or "").split(".")[0]
            return package not in LIGHTNING_PACKAGES
    return False


def configured_model(factory: Callable[[], Any]) -> Callable[[], Any]:
    """``factory`` followed by the module's ``configure_model()``, which Lightning
    calls before ``configure_optimizers()`` (layers built there have no parameters
    until then)."""

    def build() -> Any:
        model = factory()
        configure = getattr(model, "configure_model", None)
        if is_lightning_module(model) and callable(configure):
            configure()
        return model

    return build


def needs_trainer(error: BaseException, model: Any) -> bool:
    """Whether ``error`` came from a property of ``model`` that only a running
    Trainer provides (``self.trainer``, and what reads it)."""
    traceback = error.__traceback__
    while traceback is not None:
        frame = traceback.tb_frame
        if frame.f_code.co_name in TRAINER_ONLY and frame.f_locals.get("self") is model:
            return True
        traceback = traceback.tb_next
    return False


def trainer_problem(model: Any, method: str, error: BaseException, key: str):
    """The config error for ``method`` needing a Trainer the gate does not run."""
    return ProjectProblem(
        "needs-trainer",
        f"{type(model).__name__}.{method} raised {type(error).__name__}: {error}"
        " (it needs a running Trainer, which the gate does not start); keep"
        f" self.trainer out of {method}, or {ONE_LOSS_ONE_OPTIMIZER}",
        config_key=key,
    )


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
    own ``configure_optimizers()``; ``lr`` (the lr key) replaces its rate. Its
    source names the line that constructed the optimizer, for the lr hints."""
    with optimizer_construction() as site:
        returned = model.configure_optimizers()
    recipe = recipe_of(returned, built_where(site, SOURCE))
    if recipe.scheduler is not None:
        recipe.step_hook = getattr(model, "lr_scheduler_step", None)
    if lr is not None:
        recipe.override_lr(lr)
    return recipe


def recipe_of(returned: Any, source: str = SOURCE) -> Recipe:
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
    return as_recipe(conf, source)


class TrainingStepLoss:
    """``loss(model, batch)`` = ``model.training_step(batch, 0)``'s loss; the warnings
    of the first call are kept in ``warned``."""

    def __init__(self) -> None:
        self.warned: list[str] = []
        self._first = True

    def __call__(self, model: Any, batch: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always" if self._first else "ignore")
            try:
                output = model.training_step(batch, *step_arguments(model))
            except Exception as error:
                if needs_trainer(error, model):
                    raise trainer_problem(model, "training_step", error, "loss")
                raise
        if self._first:
            self._first = False
            for warning in caught:
                text = _first_sentence(str(warning.message))
                if text not in self.warned:
                    self.warned.append(text)
        return step_loss(output)


def step_arguments(model: Any) -> tuple[int, ...]:
    """``(batch_idx,)`` when ``training_step`` takes one, as Lightning decides it: a
    parameter named batch_idx, ``*args``, or a second positional parameter."""
    try:
        parameters = inspect.signature(model.training_step).parameters.values()
    except (TypeError, ValueError):
        return (0,)
    positional = [
        p for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]  # fmt: skip
    takes_index = any(p.name == "batch_idx" for p in positional) or len(positional) > 1
    varargs = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return (0,) if takes_index or varargs else ()


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
