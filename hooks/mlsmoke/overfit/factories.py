"""The project's callables as the config names them (``package.module:attr``),
imported in the project's interpreter; NotConfigured naming the key when one does not
resolve. The gate, the data expectations and the suites load theirs here."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.process.settings import OPTIMIZERS, GateSettings
from mlsmoke.overfit.training import instruments


class NotConfigured(Exception):
    """What the configuration names cannot be trained: ``key`` is the config key to
    fix (None when the message names it), ``traceback`` the project's, if any."""

    def __init__(self, key: str | None, message: str, traceback: str | None = None):
        super().__init__(message)
        self.key, self.traceback = key, traceback


class FactoryImportError(NotConfigured):
    """A ``package.module:callable`` key that does not resolve; names the key."""


def load_callable(spec: str, key: str) -> Callable[..., Any]:
    """The callable ``spec`` ("package.module:attr.path") names."""
    module_name, _, attribute = spec.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise FactoryImportError(
                key,
                f"cannot import {module_name!r} (no module named {error.name!r}) from"
                f" the project root or {sys.executable}",
            ) from None
        raise _import_failure(key, module_name, error) from None
    except Exception as error:
        raise _import_failure(key, module_name, error) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise FactoryImportError(
                key, f"module {module_name!r} has no {attribute!r}"
            )
        target = getattr(target, part)
    if not callable(target):
        raise FactoryImportError(
            key, f"{spec} is a {type(target).__name__}, not callable"
        )
    return target


def _import_failure(key: str, module: str, error: Exception) -> FactoryImportError:
    return FactoryImportError(
        key,
        f"importing {module!r} raised {type(error).__name__}: {error}",
        instruments.user_traceback(error),
    )


def load_factories(settings: GateSettings) -> dict[str, Callable[..., Any]]:
    loaded = {
        "model": load_callable(settings.model, settings.key_path("model")),
        "batch": load_callable(settings.batch, settings.key_path("batch")),
    }
    if settings.loss is not None:
        loaded["loss"] = load_callable(settings.loss, settings.key_path("loss"))
    if settings.step is not None:
        loaded["step"] = load_callable(settings.step, settings.key_path("step"))
    if settings.optimizer not in OPTIMIZERS:
        loaded["optimizer"] = load_callable(
            settings.optimizer, settings.key_path("optimizer")
        )
    return loaded
