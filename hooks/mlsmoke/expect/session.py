"""One read of the project's batches, where torch is: load the factories, draw the
batches under the configured seed, and observe them. Never raises for the project's
errors: they come back as an outcome, ``config-error`` naming the key, or
``data-error`` with the traceback into the project's code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.expect.draw import draw_batches
from mlsmoke.expect.observe import observe_batch
from mlsmoke.expect.settings import TABLE, ExpectSettings
from mlsmoke.overfit.gate import NotConfigured, load_callable
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.instruments import user_traceback

OK, CONFIG_ERROR, DATA_ERROR = "ok", "config-error", "data-error"


def observe_project(settings: ExpectSettings) -> dict[str, Any]:
    """``{"status", "observed": {"batches", "validation"}}``, or a failed status with
    ``message`` and ``traceback``."""
    factories = {"batch": (settings.batch, settings.batch_key)}
    if settings.validation:
        factories["validation"] = (settings.validation, f"{TABLE}.validation")
    loaded: dict[str, Callable[[], Any]] = {}
    for name, (spec, key) in factories.items():
        try:
            loaded[name] = load_callable(spec, key)
        except NotConfigured as error:
            return {
                "status": CONFIG_ERROR,
                "message": f"{error.key}: {error}",
                "traceback": error.traceback,
            }
    observed: dict[str, list] = {"batches": [], "validation": []}
    for name, factory in loaded.items():
        spec, key = factories[name]
        try:
            observed["batches" if name == "batch" else name] = read_batches(
                factory, settings.batches, settings.seed, spec
            )
        except Exception as error:  # the project's code: reported, never raised
            return {
                "status": DATA_ERROR,
                "message": f"{spec} ({key}) raised {type(error).__name__}: {error}",
                "traceback": user_traceback(error),
            }
    if not observed["batches"]:
        return {
            "status": DATA_ERROR,
            "traceback": None,
            "message": f"{settings.batch} ({settings.batch_key}) gave no batches",
        }
    return {"status": OK, "observed": observed}


def read_batches(
    factory: Callable[[], Any], count: int, seed: int, name: str
) -> list[dict[str, Any]]:
    """The figures of the first ``count`` batches, drawn under ``seed``."""
    with deterministic(seed):
        batches = draw_batches(factory, count, name)
    return [observe_batch(batch) for batch in batches]
