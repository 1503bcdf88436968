"""Write the last full benchmark report into docs/benchmarks.md.

``python -m benchmarks.publish [REPORT.json]`` (default: ``results/latest.json``)
rewrites the whole page, so the docs always quote one run, on the machine it names.
Every other page links to its tables instead of copying them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.report import Section

HERE = Path(__file__).resolve().parent
PAGE = HERE.parent / "docs" / "benchmarks.md"
# Tables the page leaves out; they are in the full report (one row per case).
REPORT_ONLY = ": every case"

INTRO = """\
# Benchmarks

`make bench` (`python -m benchmarks`; under 15 minutes on 2 cores) runs every
comparison side by side in one run and writes `benchmarks/results/latest.md` and
`.json`; `make bench-quick` (`--quick`, under 2 minutes) skips the slow parts and says
so, and the test suite runs it once. `python -m benchmarks.publish` then rewrites this
page from `latest.json`. Ratios are the figures; absolute times are context, since the
machine is shared and noisy. Every benchmark compares fresh processes, the warm worker
off, except the side-by-side commit latency, whose new path has it on. The last full
run:
"""


def render(report: dict) -> str:
    machine = report["machine"]
    lines = [INTRO]
    lines.append(
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['os']},"
        f" Python {machine['python']}, torch {machine['torch']}, Lightning"
        f" {machine['lightning']}, pre-commit {machine['pre-commit']};"
        f" {machine['date']}, load average {machine['load average']} at the start;"
        f" {machine['benchmark seconds']} s in all.\n"
    )
    for data in report["sections"]:
        section = Section.from_json(data)
        section.tables = [t for t in section.tables if REPORT_ONLY not in t.title]
        lines.append(section.to_markdown(level=2))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else HERE / "results" / "latest.json"
    report = json.loads(source.read_text())
    if report["quick"]:
        raise SystemExit(f"{source} is a --quick run: quote a full one")
    PAGE.write_text(render(report))
    print(f"{PAGE.relative_to(HERE.parent)}: rewritten from {source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
