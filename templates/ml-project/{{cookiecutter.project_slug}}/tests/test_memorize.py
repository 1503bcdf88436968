"""Memorization tests: the model must be able to overfit one batch.

The commit-time check is the overfit-batch hook; these run the same engine from
pytest, through mlsmoke's `overfit` fixture and its Python API. The slow test is the
longer tier, a bigger batch to a lower loss: `pytest -m slow`.
"""

from __future__ import annotations

import pytest
from mlsmoke.overfit import check

from {{ cookiecutter.package_name }} import (
    build_model,
    example_batch,
)


def test_memorizes_one_batch(overfit) -> None:
    result = overfit(build_model(), example_batch())
    assert result.steps > 0


@pytest.mark.slow
def test_memorizes_a_bigger_batch_to_a_lower_loss() -> None:
    result = check(build_model(), example_batch(batch_size=256), tier="pr")
    assert result.passed, result.report()
