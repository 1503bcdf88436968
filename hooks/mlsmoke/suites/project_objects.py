"""The project's objects the suites evaluate with, resolved as the gate resolves its
factories (``overfit/gate.py``'s load_callable, the callables' signatures, a
LightningModule's configure_model): the model, the dataset and its collate function,
and the optional loss, score, slice and checkpoint loader."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from mlsmoke.overfit.factories import NotConfigured, load_callable
from mlsmoke.overfit.training.adapters.lightning_module import configured_model
from mlsmoke.overfit.training.callables import unbound_call
from mlsmoke.overfit.training.instruments import user_traceback
from mlsmoke.suites.problem import SuitesProblem
from mlsmoke.suites.settings import SuitesSettings

OPTIONAL = ("load", "collate", "loss", "score", "slice")


@dataclass
class ProjectObjects:
    build_model: Callable[[], Any]
    dataset: Any
    collate: Callable[[list[Any]], Any]
    loss: Callable[..., Any] | None = None
    score: Callable[..., Any] | None = None
    slice: Callable[[Any], Any] | None = None
    load: Callable[..., Any] | None = None


def resolve(
    settings: SuitesSettings,
    model: Any = None,
    dataset: Any = None,
) -> ProjectObjects:
    """The objects ``settings`` names; ``model`` (a module or a callable building
    one) and ``dataset`` replace the configured ones (the pytest API's arguments)."""
    build = _model_factory(settings, model)
    source = dataset if dataset is not None else _call(
        _load(settings, "dataset"), settings.key_path("dataset"))  # fmt: skip
    indexable, loader_collate = indexable_dataset(source, settings.key_path("dataset"))
    optional = {
        name: _load(settings, name)
        for name in OPTIONAL
        if getattr(settings, name) is not None
    }
    collate = optional.pop("collate", None) or loader_collate
    return ProjectObjects(build, indexable, collate, **optional)


def indexable_dataset(source: Any, key: str) -> tuple[Any, Callable]:
    """The dataset to index and the collate function: a DataLoader's own, else
    torch's default."""
    collate: Callable = torch.utils.data.default_collate
    if isinstance(source, torch.utils.data.DataLoader):
        collate = source.collate_fn or collate
        source = source.dataset
    if not (hasattr(source, "__len__") and hasattr(source, "__getitem__")):
        raise SuitesProblem(
            f"{key}: gave a {type(source).__name__}; suites identify examples by"
            " index, so give an indexable dataset (len() and [i]) or a DataLoader"
            " over one"
        )
    return source, collate


def _model_factory(settings: SuitesSettings, model: Any) -> Callable[[], Any]:
    if isinstance(model, torch.nn.Module):
        return lambda: copy.deepcopy(model)  # the caller's instance stays as it is
    if model is not None:
        return model
    factory = _load(settings, "model")
    needs = unbound_call("model", factory)
    if needs is not None:
        raise SuitesProblem(f"{settings.key_path('model')}: {needs}")
    return configured_model(factory)


def _load(settings: SuitesSettings, name: str) -> Callable[..., Any]:
    key = settings.key_path(name)
    try:
        return load_callable(getattr(settings, name), key)
    except NotConfigured as error:
        raise SuitesProblem(f"{key}: {error}", error.traceback) from None


def _call(factory: Callable[[], Any], key: str) -> Any:
    try:
        return factory()
    except Exception as error:
        raise SuitesProblem(
            f"{key}: raised {type(error).__name__}: {error}", user_traceback(error)
        ) from None


def build_model(objects: ProjectObjects, key: str) -> torch.nn.Module:
    model = _call(objects.build_model, key)
    if not isinstance(model, torch.nn.Module):
        raise SuitesProblem(f"{key}: gave a {type(model).__name__}, not an nn.Module")
    return model
