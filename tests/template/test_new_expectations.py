"""``mlsmoke new`` records the project's expectations.json with an interpreter that has
torch, and keeps the template's, saying so, without one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from baking import TEMPLATE, Bake

from mlsmoke import cli
from mlsmoke.new_expectations import record_expectations

SHIPPED = next(TEMPLATE.glob("*/expectations.json")).read_text()


def shipped_for(package: str) -> str:
    return SHIPPED.replace("{{ cookiecutter.package_name }}", package)


def test_new_records_the_suite_where_torch_is(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    assert cli.main(["new", str(tmp_path / "tiny-net"), "--no-input"]) == 0
    out = capsys.readouterr().out
    assert (
        f"expectations.json: recorded from the project's loader with {sys.executable},"
        " the same as the template's\n" in out
    ), out
    assert "mlsmoke expect --record" not in out  # nothing left to record
    project = tmp_path / "tiny-net"
    assert (project / "expectations.json").read_text() == shipped_for("tiny_net")
    assert not list(project.rglob("__pycache__"))


def test_new_keeps_the_template_suite_without_torch(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = tmp_path / "bare"  # a venv of its own: no torch in it
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True)
    monkeypatch.setenv("MLSMOKE_PYTHON", str(bare / "bin" / "python"))
    assert cli.main(["new", str(tmp_path / "tiny-net"), "--no-input"]) == 0
    out = capsys.readouterr().out
    assert (
        "expectations.json: the template's (no interpreter with torch here to record"
        " it; `mlsmoke expect --record` below records it with the project's torch)\n"
        in out
    ), out
    suite = tmp_path / "tiny-net" / "expectations.json"
    assert suite.read_text() == shipped_for("tiny_net")
    # The step, once the environment has torch (this interpreter stands for .venv).
    step = "  mlsmoke expect --record   # expectations.json, with .venv's torch\n"
    assert (
        out.index('pip install -e ".[dev]"')
        < out.index(step)
        < out.index("  pytest && ")
    )
    setup = (tmp_path / "tiny-net" / "README.md").read_text().split("```")[1]
    assert setup.index("pip install -e") < setup.index("mlsmoke expect --record")
    suite.unlink()
    recorded = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "expect", "--record"],
        cwd=tmp_path / "tiny-net",
        env={**os.environ, "MLSMOKE_PYTHON": sys.executable, "MLSMOKE_WORKER": "0"},
        capture_output=True,
        text=True,
    )
    assert recorded.returncode == 0, recorded.stderr
    assert "expect: recorded 14 expectations from 4 batches" in recorded.stdout
    assert suite.read_text() == shipped_for("tiny_net")


def test_a_suite_that_differs_is_recorded_over_and_the_difference_shown(
    bake: Bake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a template whose suite no longer matches its loader gets at scaffold
    time: the project's own record, and the lines that changed."""
    project = bake()
    suite = project / "expectations.json"
    data = json.loads(suite.read_text())
    data["expectations"] = [
        e for e in data["expectations"] if (e["field"], e["kind"]) != ("[0]", "finite")
    ]
    suite.write_text(json.dumps(data))
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)

    outcome = record_expectations(project)

    assert outcome.recorded
    assert "what differs from the template's:\n  + [0] finite: held" in (
        outcome.message
    ), outcome.message
    assert suite.read_text() == shipped_for("spiral_classifier")
