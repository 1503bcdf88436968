"""docs/benchmarks.md quotes a report's sections with their nested tables (a catalog's
summary and confusion matrix), but not the tables with one row per case."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import publish  # noqa: E402
from benchmarks.report import Section  # noqa: E402

MACHINE_KEYS = "cpu cores os python torch lightning pre-commit date".split() + [
    "load average",
    "benchmark seconds",
]


def catalog_section() -> Section:
    matrix = Section("library: expected code x code given", ["expected \\ given"], [])
    matrix.columns.append("data-error")
    matrix.rows.append(["data-error", 3])
    cases = Section("library: every case", ["case"], [["hf-bert-raw-text"]])
    return Section(
        "Diagnosis catalogs", ["catalog"], [["library"]], ["n"], [matrix, cases]
    )


def report(quick: bool = False) -> dict:
    machine = {key: f"<{key}>" for key in MACHINE_KEYS}
    return {
        "quick": quick,
        "machine": machine,
        "sections": [catalog_section().to_json()],
    }


def test_nested_tables_survive_the_json_report() -> None:
    section = catalog_section()
    again = Section.from_json(json.loads(json.dumps(section.to_json())))
    assert again == section
    assert "#### library: expected code x code given" in again.to_markdown()


def test_the_page_leaves_out_the_per_case_tables() -> None:
    text = publish.render(report())
    assert text.startswith("# Benchmarks\n")
    assert "\n## Diagnosis catalogs\n" in text
    assert "\n### library: expected code x code given\n" in text
    assert "| data-error | 3 |" in text
    assert "every case" not in text and "hf-bert-raw-text" not in text
    assert "Machine: <cpu>, <cores> cores, <os>, Python <python>" in text


def test_main_writes_the_docs_page_and_refuses_a_quick_run(
    tmp_path: Path, monkeypatch
) -> None:
    page = tmp_path / "docs" / "benchmarks.md"
    page.parent.mkdir()
    monkeypatch.setattr(publish, "PAGE", page)
    monkeypatch.setattr(publish, "HERE", tmp_path / "benchmarks")
    full, quick = tmp_path / "full.json", tmp_path / "quick.json"
    full.write_text(json.dumps(report()))
    quick.write_text(json.dumps(report(quick=True)))

    assert publish.main([str(full)]) == 0
    assert page.read_text() == publish.render(report())
    with pytest.raises(SystemExit, match="--quick run"):
        publish.main([str(quick)])
    assert page.read_text() == publish.render(report())


def test_the_committed_page_is_the_writers_output() -> None:
    """docs/benchmarks.md is what ``python -m benchmarks.publish`` writes."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    assert text.startswith(publish.INTRO + "\nMachine: ")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings[0] == "# Benchmarks" and len(headings) > 5
    assert all(h.startswith(("## ", "### ")) for h in headings[1:]), headings
    assert publish.REPORT_ONLY not in text
