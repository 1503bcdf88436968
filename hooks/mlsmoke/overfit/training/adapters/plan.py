"""Which adapters one gate needs, decided from one model built under the gate's seed.

The model callable's product decides: a LightningModule brings its loss
(``training_step``) and its recipe (``configure_optimizers``) unless the config names a
``loss`` or an ``optimizer``. The batch callable is always wrapped: it may return a
batch, or a loader, iterable or data module to draw the first batch from.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlsmoke.overfit.training.adapters import lightning_module
from mlsmoke.overfit.training.adapters.batches import BatchSource
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.evidence import ProjectProblem


@dataclass
class Adapted:
    """The factories train() gets, and what ``-v`` says about them."""

    factories: dict[str, Callable[..., Any]]
    batch_source: BatchSource
    loss_from_training_step: lightning_module.TrainingStepLoss | None = None
    recipe_from_module: bool = False
    module_lr: float | None = None  # the lr configure_optimizers() sets
    # (model, lr) -> Recipe when the module's configure_optimizers() trains
    recipe_factory: Callable[[Any, float | None], Any] | None = None
    notes: list[str] = field(default_factory=list)

    def run_notes(self) -> list[str]:
        """``notes`` plus what the last run learned: the batch's origin, and the
        warnings training_step gave outside a Trainer."""
        notes = list(self.notes)
        origin = self.batch_source.origin
        notes.append(f"batch: {origin}" if origin else "batch: the batch callable's")
        if self.loss_from_training_step is not None:
            notes += [
                f"training_step warned (outside a Trainer): {text}"
                for text in self.loss_from_training_step.warned
            ]
        return notes


def adapt(
    loaded: dict[str, Callable[..., Any]],
    seed: int,
    names: dict[str, str],
    use_project_optimizer: bool,
) -> Adapted:
    """``loaded`` with the adapters the model and batch need; ``names`` says where the
    factories come from (config specs); ProjectProblem for a LightningModule the gate
    cannot train (several optimizers, manual optimization)."""
    batch = BatchSource(loaded["batch"], names.get("batch", "the batch callable"))
    factories = {**loaded, "batch": batch}
    adapted = Adapted(factories, batch)
    model = _sample_model(loaded["model"], seed)
    if not lightning_module.is_lightning_module(model):
        return adapted
    factories["model"] = lightning_module.configured_model(loaded["model"])
    batch.module = model
    kind = type(model).__name__
    if "loss" not in loaded:
        lightning_module.check_automatic_optimization(model)
        adapted.loss_from_training_step = lightning_module.TrainingStepLoss()
        factories["loss"] = adapted.loss_from_training_step
        arguments = ", ".join(
            ["batch", *map(str, lightning_module.step_arguments(model))]
        )
        adapted.notes.append(f"loss: {kind}.training_step({arguments})")
    if use_project_optimizer and "optimizer" not in loaded:
        recipe = lightning_module.recipe_of(_configured(model))
        adapted.recipe_factory = lightning_module.configure_optimizers_recipe
        adapted.recipe_from_module = True
        adapted.module_lr = recipe.configured_lr
    return adapted


def _configured(model: Any) -> Any:
    """What ``model.configure_optimizers()`` returns; a config error when it raises
    (outside a Trainer, ``self.trainer`` is not there to ask)."""
    try:
        return model.configure_optimizers()
    except Exception as error:
        if lightning_module.needs_trainer(error, model):
            raise lightning_module.trainer_problem(
                model, "configure_optimizers()", error, "optimizer"
            ) from None
        raise ProjectProblem(
            "configure-optimizers-raised",
            f"{type(model).__name__}.configure_optimizers() raised"
            f" {type(error).__name__}: {error} ({_raised_at(error)})",
            config_key="optimizer",
        ) from None


def _raised_at(error: BaseException) -> str:
    """``file:line in function`` of the innermost frame ``error`` passed through."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def _sample_model(factory: Callable[[], Any], seed: int) -> Any:
    """One model from ``factory``, or None when building it raises (the training run
    then records that error where it belongs)."""
    try:
        with deterministic(seed):
            return lightning_module.configured_model(factory)()
    except (Exception, SystemExit):
        return None
