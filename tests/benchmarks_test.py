"""The benchmark harness runs end to end: ``python -m benchmarks --quick`` once.

No figure is asserted (speed belongs in the benchmarks, not in tests); only that every
benchmark produces its table, so that the harness cannot rot between full runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.e2e
def test_quick_benchmarks_produce_their_tables(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--output", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = (tmp_path / "quick.md").read_text()
    results = json.loads((tmp_path / "quick.json").read_text())
    benchmarks = sorted(path.stem for path in (ROOT / "benchmarks").glob("bench_*.py"))
    assert sorted(f"bench_{name}" for name in results["seconds"]) == benchmarks
    assert "| machine | |" in report and "| cpu |" in report
    for section in results["sections"]:
        assert section["rows"], section["title"]
        header = "| " + " | ".join(section["columns"]) + " |"
        assert f"### {section['title']}" in report and header in report
