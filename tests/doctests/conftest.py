"""A throwaway project to run ``mlsmoke doctest`` in, using this interpreter."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from mlsmoke import cli

WriteFiles = Callable[[dict[str, str]], None]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project directory, the working directory, using this interpreter."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    return root


@pytest.fixture
def write(project: Path) -> WriteFiles:
    """Write ``{relative path: dedented text}`` into the project."""

    def write_files(files: dict[str, str]) -> None:
        for name, text in files.items():
            path = project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))

    return write_files


@pytest.fixture
def doctest(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    """Run ``mlsmoke doctest FILES`` through the CLI: ``(exit code, output)``."""

    def run(*files: str) -> tuple[int, str]:
        code = cli.main(["doctest", *files])
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return run
