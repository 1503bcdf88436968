"""pytest plugin: the ``overfit`` fixture, a memorization test in one line.

::

    def test_model_memorizes_one_batch(overfit):
        overfit(MyModel(), make_batch(), loss=my_loss)

The fixture runs :func:`mlsmoke.overfit.check` and fails the test with the gate's
report (curve, diagnosis, suggestions) unless the model memorizes the batch; it returns
the Result. torch is imported only when a test uses the fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mlsmoke.overfit.verdict.result import Result


@pytest.fixture
def overfit() -> Callable[..., Result]:
    """``overfit(model, batch, loss=None, **options)``: fail unless it memorizes."""

    def assert_memorizes(model: Any, batch: Any, loss: Any = None, **options: Any):
        from mlsmoke.overfit.api import check

        result = check(model, batch, loss, **options)
        if not result.passed:
            pytest.fail(result.report(), pytrace=False)
        return result

    return assert_memorizes
