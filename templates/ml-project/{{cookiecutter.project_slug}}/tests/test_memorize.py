"""Memorization tests: the model must be able to overfit one batch.

The commit-time check is the overfit-batch hook; these run the same engine from pytest.
The slow tier asks for more, a bigger batch and a lower loss: `pytest -m slow`.
"""

from __future__ import annotations

import pytest
from mlsmoke.overfit import check

from {{ cookiecutter.package_name }} import (
    build_model,
    example_batch,
)


def test_memorizes_one_batch() -> None:
    result = check(build_model(), example_batch())
    assert result.passed, result.report()


@pytest.mark.slow
def test_memorizes_a_bigger_batch_to_a_lower_loss() -> None:
    batch = example_batch(batch_size=256)
    result = check(build_model(), batch, max_steps=2000, target_ratio=0.01)
    assert result.passed, result.report()
