"""A throwaway project to run ``mlsmoke doctest`` in, using this interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from mlsmoke import cli

WriteFiles = Callable[[dict[str, str]], None]


def _make_venv(path: Path, packages: dict[str, str]) -> Path:
    """A virtual environment at ``path`` with ``{module name: source}`` installed.

    No pip: the modules go straight into site-packages, which takes a fraction of a
    second instead of an install from an index.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", path], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for name, source in packages.items():
        Path(purelib, f"{name}.py").write_text(source)
    return python


@pytest.fixture
def make_venv() -> Callable[[Path, dict[str, str]], Path]:
    """``make_venv(path, {module: source})``: a small venv, returns its python."""
    return _make_venv


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
