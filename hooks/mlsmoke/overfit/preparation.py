"""A gate ready to train: its factories loaded and adapted, its device resolved, its
recipe factory chosen."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.factories import NotConfigured, load_callable, load_factories
from mlsmoke.overfit.process.settings import DEFAULT_LR, OPTIMIZERS, GateSettings
from mlsmoke.overfit.training.adapters.plan import Adapted, adapt
from mlsmoke.overfit.training.callables import unbound_call
from mlsmoke.overfit.training.device import resolve_device
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.optimizers import optimizer_factory


@dataclasses.dataclass
class Prepared:
    """A gate ready to train: its factories with the adapters they need, the device,
    and the recipe factory; ``settings`` with lr None when a LightningModule's own
    recipe trains at its own lr."""

    settings: GateSettings
    loaded: dict[str, Callable[..., Any]]  # as configured, before the adapters
    adapted: Adapted
    device: str
    build_optimizer: Callable[..., Any]


def prepare(
    settings: GateSettings,
    device: str | None,
    factories: dict[str, Callable[..., Any]] | None = None,
) -> Prepared:
    """Load the factories, resolve the device, adapt; NotConfigured naming the key."""
    loaded = load_factories(settings) if factories is None else dict(factories)
    if settings.step is not None and "step" not in loaded:  # check(step="mod:fn")
        loaded["step"] = load_callable(settings.step, settings.key_path("step"))
    try:
        resolved_device = resolve_device(device or settings.device)
    except ProjectProblem as error:
        key = "--device" if device else settings.key_path("device")
        raise NotConfigured(None, f"{key}: {error}") from None
    for key, callable_ in loaded.items():
        needs = unbound_call(key, callable_)
        if needs is not None:
            raise NotConfigured(settings.key_path(key), needs)
    try:
        adapted = adapt(
            loaded,
            settings.seed,
            factory_names(settings),
            "optimizer" in settings.unset,
        )
    except ProjectProblem as error:
        key = settings.key_path(error.config_key or "model")
        raise NotConfigured(key, str(error)) from None
    build_optimizer = adapted.recipe_factory or recipe_factory_for(
        settings, loaded.get("optimizer")
    )
    if adapted.recipe_factory is not None and "lr" in settings.unset:
        settings = dataclasses.replace(settings, lr=None)  # the module's own lr
    return Prepared(settings, loaded, adapted, resolved_device, build_optimizer)


def factory_names(settings: GateSettings) -> dict[str, str]:
    """How ``-v`` names the model and batch callables."""
    if settings.where == "api":
        return {"model": "check()'s model", "batch": "check()'s batch"}
    return {"model": settings.model, "batch": settings.batch}


def recipe_factory_for(settings: GateSettings, project: Callable | None) -> Callable:
    name = settings.optimizer if settings.optimizer in OPTIMIZERS else "adam"
    source = settings.optimizer if ":" in settings.optimizer else None
    return optimizer_factory(name, project, DEFAULT_LR[name], source)
