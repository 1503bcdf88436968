"""A classifier project trained and recorded once per session (``mlsmoke suites
record`` through the console script); tests that change it work on a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from suites_cli import Project, make_project, run_suites


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = make_project(tmp_path_factory.mktemp("suites") / "classifier")
    project.train(300)
    ran = run_suites(project.root, "record")
    assert ran.code == 0, ran.stderr
    return project


@pytest.fixture
def recorded_copy(recorded: Project, tmp_path: Path) -> Project:
    root = tmp_path / "classifier"
    shutil.copytree(recorded.root, root)
    return Project(root, recorded.kind)
