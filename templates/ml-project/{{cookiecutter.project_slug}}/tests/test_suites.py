"""The regression suites, from pytest: the trained checkpoint must hold every suite
recorded in suites/ (the hardest evaluation points, each spiral arm).

CI trains checkpoint.pt first (``python train.py``); without a checkpoint there is
nothing to check, and the test says so.
"""

from __future__ import annotations

from pathlib import Path

import mlsmoke.suites
import pytest

CHECKPOINT = Path(__file__).parents[1] / "checkpoint.pt"


@pytest.mark.skipif(
    not CHECKPOINT.is_file(), reason="no checkpoint.pt: run python train.py"
)
def test_checkpoint_holds_its_regression_suites() -> None:
    checked = mlsmoke.suites.check(CHECKPOINT, root=CHECKPOINT.parent)
    assert checked.passed, checked.report()
