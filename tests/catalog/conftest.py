"""A diagnosis that raises from mlsmoke's own code fails these tests, instead of
letting the registry answer with the next diagnosis (``verdict/internal_errors.py``)."""

import pytest

from mlsmoke.overfit.verdict.internal_errors import VARIABLE


@pytest.fixture(autouse=True)
def internal_errors_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, "raise")
