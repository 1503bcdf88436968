"""The README quotes a report's sections with their nested tables (a catalog's summary
and confusion matrix), but not the tables with one row per case."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import readme  # noqa: E402
from benchmarks.report import Section  # noqa: E402


def catalog_section() -> Section:
    matrix = Section("library: expected code x code given", ["expected \\ given"], [])
    matrix.columns.append("data-error")
    matrix.rows.append(["data-error", 3])
    cases = Section("library: every case", ["case"], [["hf-bert-raw-text"]])
    return Section(
        "Diagnosis catalogs", ["catalog"], [["library"]], ["n"], [matrix, cases]
    )


def test_nested_tables_survive_the_json_report() -> None:
    section = catalog_section()
    again = Section.from_json(json.loads(json.dumps(section.to_json())))
    assert again == section
    assert "#### library: expected code x code given" in again.to_markdown()


def test_the_readme_leaves_out_the_per_case_tables() -> None:
    machine = {
        key: "x"
        for key in (
            "cpu cores os python torch lightning pre-commit date".split()
            + ["load average", "benchmark seconds"]
        )
    }
    text = readme.render(
        {"machine": machine, "sections": [catalog_section().to_json()]}
    )
    assert "| data-error | 3 |" in text
    assert "every case" not in text and "hf-bert-raw-text" not in text
