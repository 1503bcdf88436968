"""The pytest API: ``mlsmoke.expect.check(loader, suite)``, in the caller's process::

    from mlsmoke.expect import check

    def test_batches_meet_their_expectations():
        check(train_loader, "expectations.json")

``loader`` is what ``[tool.mlsmoke.expect] batch`` names or what it returns: a
DataLoader, a LightningDataModule, an iterable of batches, or a callable returning one
of those or one batch. Raises AssertionError listing the failed expectations;
ConfigError for a suite file that is not valid.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlsmoke.expect import suite_file
from mlsmoke.expect.checking import check as check_suite
from mlsmoke.expect.kinds.base import Failure, Observed
from mlsmoke.expect.report import verdict
from mlsmoke.expect.model_probe import probe_model
from mlsmoke.expect.observe import observe_batch
from mlsmoke.expect.session import drawn, read_batches
from mlsmoke.expect.settings import DEFAULT_BATCHES


def check(
    loader: Any,
    suite: str | Path = "expectations.json",
    *,
    validation: Any = None,
    batches: int = DEFAULT_BATCHES,
    seed: int = 0,
    model: Callable[[], Any] | None = None,
    loss: Callable[[Any, Any], Any] | None = None,
) -> list[Failure]:
    """Check ``batches`` batches of ``loader`` against the suite; [] when all held.
    ``model`` (and ``loss``): the gate's callables, whose widths class ids and token
    ids are checked against; without them, the widths recorded in the suite."""
    recorded = suite_file.read(Path(suite))
    observed = observe(loader, validation, batches, seed, model, loss)
    failures = check_suite(recorded, observed)
    if failures:
        raise AssertionError(
            verdict(
                failures,
                len(recorded.expectations),
                len(observed.batches),
                recorded.path,
            )
        )
    return failures


def observe(
    loader: Any,
    validation: Any,
    batches: int,
    seed: int,
    model: Callable[[], Any] | None = None,
    loss: Callable[[Any, Any], Any] | None = None,
) -> Observed:
    drawn_batches = drawn(_factory(loader), batches, seed, "loader")
    found = Observed([observe_batch(batch) for batch in drawn_batches])
    if model is not None and drawn_batches:
        found.model = probe_model(model, loss, drawn_batches[0], seed)
    if validation is not None:
        found.validation = read_batches(
            _factory(validation), batches, seed, "validation"
        )
    return found


def _factory(loader: Any) -> Callable[[], Any]:
    """A callable to draw from: ``loader`` itself when it is a factory (a function,
    not a loader, data module or batch object)."""
    if (
        callable(loader)
        and not hasattr(loader, "__iter__")
        and not hasattr(loader, "train_dataloader")
    ):
        return loader
    return lambda: loader
