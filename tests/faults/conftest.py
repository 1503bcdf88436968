"""Fixtures of the fault-injection suite: a throwaway project and the real CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .faultkit import Outcome, run_cli, write_project


@pytest.fixture
def fault_project(tmp_path: Path) -> Callable[..., Path]:
    """``fault_project(**overfit_keys)``: a project with one gate, ``smoke``."""

    def make(**overfit: object) -> Path:
        keys = {key.replace("_", "-"): value for key, value in overfit.items()}
        return write_project(tmp_path / "project", keys)

    return make


@pytest.fixture(
    params=["spawning_model", "forking_model", "daemon_model"],
    ids=["subprocess", "fork", "double-fork-daemon"],
)
def process_starting_model(request: pytest.FixtureRequest) -> str:
    """Each factory whose model starts processes of its own: by subprocess, by fork,
    and as a double-forked daemon."""
    return f"fault_factories:{request.param}"


@pytest.fixture
def mlsmoke(tmp_path: Path) -> Callable[..., Outcome]:
    """``mlsmoke(*args, cwd=..., fault=..., ...)``: the CLI in a subprocess."""

    def run(*args: str, cwd: Path | None = None, **options) -> Outcome:
        return run_cli(
            args, cwd or tmp_path / "project", tmp_path / "scratch", **options
        )

    return run
