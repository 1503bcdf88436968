"""Bake the template with cookiecutter's API into throwaway directories (the ``bake``
fixture, registered by this directory's conftest.py).

(pytest-cookies renders the context outside cookiecutter's import path for local Jinja
extensions, so it cannot load the template's ``mlsmoke_release`` extension.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from cookiecutter.main import cookiecutter

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "templates" / "ml-project"

Bake = Callable[..., Path]


@pytest.fixture
def bake(tmp_path: Path) -> Bake:
    """``bake(**answers)`` generates the template and returns the project directory."""
    counter = itertools.count()
    config = {
        "replay_dir": str(tmp_path / "replay"),
        "cookiecutters_dir": str(tmp_path / "cookiecutters"),
    }

    def run(template: Path = TEMPLATE, **answers: str) -> Path:
        output = tmp_path / f"bake{next(counter)}"
        project = cookiecutter(
            str(template),
            no_input=True,
            extra_context=answers,
            output_dir=str(output),
            default_config=config,
        )
        return Path(project)

    return run
