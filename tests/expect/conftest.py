"""Suites recorded once per session from the unchanged loaders of ``expect_loaders``,
and the check of a changed loader against them, in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import expect_loaders as loaders
import pytest

from mlsmoke.expect.api import observe
from mlsmoke.expect.checking import check
from mlsmoke.expect.kinds.base import Failure
from mlsmoke.expect.record import infer
from mlsmoke.expect.suite_file import Suite

RECORDED = {
    "images": (loaders.images, None),
    "tokens": (loaders.token_windows, None),
    "tabular": (loaders.tabular, loaders.tabular_validation),
    "encodings": (loaders.encodings, None),
    "labels": (loaders.one_hot, None),
}


def record(loader: Any, validation: Any = None) -> Suite:
    observed = observe(loader, validation, 4, 0)
    return Suite(Path("expectations.json"), infer(observed), 2.0)


def failures_of(suite: Suite, loader: Any, validation: Any = None) -> list[Failure]:
    return check(suite, observe(loader, validation, 4, 0))


@pytest.fixture(scope="session")
def suites() -> dict[str, Suite]:
    return {
        kind: record(make(), validation() if validation else None)
        for kind, (make, validation) in RECORDED.items()
    }
