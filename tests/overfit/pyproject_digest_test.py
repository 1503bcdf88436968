"""What of pyproject.toml the pass cache's key counts: an edit that cannot change a
run (a description, another hook's table, black's settings) keeps the cached pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke.overfit.process.pyproject_digest import pyproject_digest, relevant_part

BASE = """\
[project]
name = "demo"
description = "one"
dependencies = ["torch"]

[tool.mlsmoke.overfit]
model = "models:MLP"

[tool.demo]
width = 8
"""


def test_descriptive_metadata_and_checkers_are_left_out() -> None:
    parsed = {
        "project": {"name": "demo", "version": "1", "authors": [], "dependencies": []},
        "tool": {"mlsmoke": {}, "ruff": {}, "pytest": {}, "demo": {"width": 8}},
        "build-system": {"requires": ["hatchling"]},
    }
    assert relevant_part(parsed) == {
        "project": {"name": "demo", "dependencies": []},
        "tool": {"demo": {"width": 8}},
        "build-system": {"requires": ["hatchling"]},
    }


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('description = "one"', 'description = "two"'),
        ('model = "models:MLP"', 'model = "models:MLP"  # the gate'),
        ("[tool.demo]", "[tool.black]\nline-length = 99\n\n[tool.demo]"),
        ("[tool.demo]", "[tool.mlsmoke.doctest]\ntimeout = 5\n\n[tool.demo]"),
    ],
)
def test_an_edit_no_run_reads_keeps_the_digest(
    tmp_path: Path, old: str, new: str
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(BASE)
    before = pyproject_digest(path)
    path.write_text(BASE.replace(old, new))
    assert pyproject_digest(path) == before


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('["torch"]', '["torch", "numpy"]'),
        ("width = 8", "width = 16"),  # a table the project's own code may read
    ],
)
def test_an_edit_a_run_may_read_changes_the_digest(
    tmp_path: Path, old: str, new: str
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(BASE)
    before = pyproject_digest(path)
    path.write_text(BASE.replace(old, new))
    assert pyproject_digest(path) != before


def test_an_unparsable_or_missing_file_still_has_a_digest(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    assert pyproject_digest(path) == "missing"
    path.write_text("[tool.mlsmoke.overfit\n")
    broken = pyproject_digest(path)
    path.write_text("[tool.mlsmoke.overfit]]\n")
    assert pyproject_digest(path) not in (broken, "missing")
