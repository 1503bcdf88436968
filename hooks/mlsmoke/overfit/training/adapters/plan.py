"""Which adapters one gate needs, decided from one model built under the gate's seed.

The model callable's product decides: a LightningModule brings its loss
(``training_step``) and its recipe (``configure_optimizers``) unless the config names a
``loss`` or an ``optimizer``. The batch callable is always wrapped: it may return a
batch, or a loader, iterable or data module to draw the first batch from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlsmoke.overfit.training.adapters import configure_optimizers, lightning_module
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
    kind = type(model).__name__
    if "loss" not in loaded:
        lightning_module.check_automatic_optimization(model)
        adapted.loss_from_training_step = lightning_module.TrainingStepLoss()
        factories["loss"] = adapted.loss_from_training_step
        adapted.notes.append(f"loss: {kind}.training_step(batch, 0)")
    if use_project_optimizer and "optimizer" not in loaded:
        recipe = lightning_module.recipe_of(_configured(model))
        adapted.recipe_factory = lightning_module.configure_optimizers_recipe
        adapted.recipe_from_module = True
        group = recipe.optimizer.param_groups[0]
        adapted.module_lr = float(group.get("initial_lr", group["lr"]))
    return adapted


def _configured(model: Any) -> Any:
    """What ``model.configure_optimizers()`` returns; a config error when it raises
    (outside a Trainer, ``self.trainer`` is not there to ask)."""
    try:
        return model.configure_optimizers()
    except Exception as error:
        raise ProjectProblem(
            "configure-optimizers-raised",
            f"{type(model).__name__}.configure_optimizers() raised"
            f" {type(error).__name__}: {error}; the gate calls it outside a Trainer,"
            f" so it must not need self.trainer; or "
            + configure_optimizers.ONE_LOSS_ONE_OPTIMIZER,
            config_key="optimizer",
        ) from None


def _sample_model(factory: Callable[[], Any], seed: int) -> Any:
    """One model from ``factory``, or None when building it raises (the training run
    then records that error where it belongs)."""
    try:
        with deterministic(seed):
            return factory()
    except (Exception, SystemExit):
        return None
