"""The template's expectations.json is the suite ``mlsmoke expect --record`` writes for
the generated project, and the template's own data bug is blocked by it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from baking import Bake

from mlsmoke.cli import main as cli_main
from mlsmoke.expect import suite_file


def test_the_shipped_suite_is_what_record_writes(
    bake: Bake, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    project = bake(package_name="other_name")
    shipped = (project / "expectations.json").read_text()
    assert '"batch": "other_name.data:train_loader"' in shipped
    monkeypatch.chdir(project)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    (project / "expectations.json").unlink()
    assert cli_main(["expect", "--record"]) == 0
    assert (project / "expectations.json").read_text() == shipped

    data = project / "src" / "other_name" / "data.py"
    source = data.read_text()
    normalization = "points = normalize(readings)"
    assert normalization in source
    data.write_text(source.replace(normalization, "points = readings"))
    capsys.readouterr()
    assert cli_main(["expect"]) == 1
    out = capsys.readouterr().out
    # The readings are the batches times 1024 (millimetres): a std ~1000x the band's.
    assert re.search(
        r"likely: the scale changed ~1\d{3}x: a normalization removed", out
    ), out


def test_a_fresh_project_tests_its_batches_with_the_suite(bake: Bake) -> None:
    tests = (bake() / "tests" / "test_data.py").read_text()
    assert "from mlsmoke.expect import check" in tests
    assert 'check(train_loader(), Path(__file__).parents[1] / "expectations.json")' in (
        tests
    )


def test_the_template_suite_reads_for_any_package_name(tmp_path: Path) -> None:
    template = Path(__file__).resolve().parents[2] / "templates" / "ml-project"
    text = next(template.glob("*/expectations.json")).read_text()
    assert "{{ cookiecutter.package_name }}" in text
    rendered = tmp_path / "expectations.json"
    rendered.write_text(text.replace("{{ cookiecutter.package_name }}", "pkg"))
    assert len(suite_file.read(rendered).expectations) == 14
