"""One read of the project's batches, where torch is: load the factories, draw the
batches under the configured seed, and observe them. Never raises for the project's
errors: they come back as an outcome, ``config-error`` naming the key, or
``data-error`` with the traceback into the project's code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.expect.draw import draw_batches
from mlsmoke.expect.model_probe import probe_model
from mlsmoke.expect.observe import observe_batch
from mlsmoke.expect.settings import TABLE, ExpectSettings
from mlsmoke.overfit.factories import NotConfigured, load_callable
from mlsmoke.overfit.process.shared_keys import GATE_TABLE
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.instruments import user_traceback

OK, CONFIG_ERROR, DATA_ERROR = "ok", "config-error", "data-error"


def observe_project(settings: ExpectSettings) -> dict[str, Any]:
    """``{"status", "observed": {"batches", "validation"[, "model"]}}``, or a failed
    status with ``message`` and ``traceback``; ``model`` when the settings name the
    gate's model (``model_probe.probe_model``)."""
    factories = {"batch": (settings.batch, settings.batch_key)}
    if settings.validation:
        factories["validation"] = (settings.validation, f"{TABLE}.validation")
    loaded: dict[str, Callable[[], Any]] = {}
    for name, (spec, key) in factories.items():
        try:
            loaded[name] = load_callable(spec, key)
        except NotConfigured as error:
            return _config_error(error)
    observed: dict[str, Any] = {"batches": [], "validation": []}
    first = None
    for name, factory in loaded.items():
        spec, key = factories[name]
        try:
            batches = drawn(factory, settings.batches, settings.seed, spec)
            observed["batches" if name == "batch" else name] = [
                observe_batch(batch) for batch in batches
            ]
        except Exception as error:  # the project's code: reported, never raised
            return {
                "status": DATA_ERROR,
                "message": f"{spec} ({key}) raised {type(error).__name__}: {error}",
                "traceback": user_traceback(error),
            }
        first = batches[0] if name == "batch" and batches else first
    if first is None:
        return {
            "status": DATA_ERROR,
            "traceback": None,
            "message": f"{settings.batch} ({settings.batch_key}) gave no batches",
        }
    if settings.model:
        try:
            observed["model"] = model_widths(settings, first)
        except NotConfigured as error:
            return _config_error(error)
    return {"status": OK, "observed": observed}


def model_widths(settings: ExpectSettings, batch: Any) -> dict[str, Any]:
    """The gate's model's widths as ``batch``'s fields meet them."""
    model = load_callable(settings.model, f"{GATE_TABLE}.model")
    loss = load_callable(settings.loss, f"{GATE_TABLE}.loss") if settings.loss else None
    return probe_model(model, loss, batch, settings.seed)


def _config_error(error: NotConfigured) -> dict[str, Any]:
    return {
        "status": CONFIG_ERROR,
        "message": f"{error.key}: {error}",
        "traceback": error.traceback,
    }


def drawn(factory: Callable[[], Any], count: int, seed: int, name: str) -> list[Any]:
    """The first ``count`` batches, drawn under ``seed``."""
    with deterministic(seed):
        return draw_batches(factory, count, name)


def read_batches(
    factory: Callable[[], Any], count: int, seed: int, name: str
) -> list[dict[str, Any]]:
    """The figures of the first ``count`` batches, drawn under ``seed``."""
    return [observe_batch(batch) for batch in drawn(factory, count, seed, name)]
