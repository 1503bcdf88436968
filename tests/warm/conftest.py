"""Each test's warm workers are stopped when it ends, whatever it asserted."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from .warmkit import WarmProject, warm_project


@pytest.fixture
def project(tmp_path: Path) -> Iterator[WarmProject]:
    made = warm_project(tmp_path)
    yield made
    for pid in made.warm_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
