"""The ``project`` fixture: a profiled project in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from profile_cli import make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")
