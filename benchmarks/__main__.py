"""``python -m benchmarks [--quick] [--only NAME] [--output DIR]``.

Runs every ``benchmarks/bench_<name>.py`` (each exposes ``run(quick) -> Section``),
prints one Markdown table per section and the machine it ran on, and writes the report
to ``latest.md`` and ``latest.json`` (``quick.md`` and ``quick.json`` for ``--quick``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from benchmarks.machine import describe_machine, load_average, to_markdown
from benchmarks.report import Section

HERE = Path(__file__).resolve().parent
# Sections appear in this order; any other bench_<name>.py follows alphabetically.
ORDER = (
    "gate",
    "adapters",
    "cache",
    "commit",
    "commit_paths",
    "hook_env",
    "ci",
    "strict_mode",
    "doctest",
    "catalog",
    "reliability",
    "init",
    "adopt",
    "suites",
)


def available_benchmarks() -> list[str]:
    found = {path.stem.removeprefix("bench_") for path in HERE.glob("bench_*.py")}
    known = [name for name in ORDER if name in found]
    return known + sorted(found - set(known))


def run_benchmark(name: str, quick: bool) -> tuple[Section, float, bool]:
    """The section of one benchmark, its seconds, and whether it ran cleanly."""
    start = time.perf_counter()
    try:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        section = module.run(quick)
        ok = True
    except Exception as error:  # one broken benchmark must not hide the others
        traceback.print_exc()
        section = Section(
            title=f"{name} (failed)",
            columns=["error"],
            rows=[[f"{type(error).__name__}: {error}".splitlines()[0]]],
        )
        ok = False
    return section, time.perf_counter() - start, ok


def render(machine: dict[str, str], sections: list[Section], quick: bool) -> str:
    mode = "`python -m benchmarks --quick`" if quick else "`python -m benchmarks`"
    parts = [f"## Benchmarks ({mode})\n", to_markdown(machine)]
    parts += [section.to_markdown() for section in sections]
    return "\n".join(parts)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one repeat, small workloads, slow environment builds skipped (< 2 min)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=available_benchmarks(),
        metavar="NAME",
        help="run only this benchmark (repeatable): "
        + ", ".join(available_benchmarks()),
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=HERE / "results",
        help="directory for the Markdown and JSON report (default: %(default)s)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # The comparisons are of fresh processes: no warm worker, unless a benchmark
    # turns it on itself (commit_paths does, for both its paths).
    os.environ["MLSMOKE_WORKER"] = "0"
    machine = describe_machine()
    sections, timings, all_ok = [], {}, True
    for name in args.only or available_benchmarks():
        print(f"running bench_{name} ...", file=sys.stderr, flush=True)
        section, seconds, ok = run_benchmark(name, args.quick)
        print(section.to_markdown(), flush=True)
        sections.append(section)
        timings[name] = round(seconds, 1)
        all_ok &= ok
    machine["load average (end)"] = load_average()
    machine["benchmark seconds"] = f"{sum(timings.values()):.0f}"
    report = render(machine, sections, args.quick)
    print(to_markdown(machine))
    stem = "quick" if args.quick else "latest"
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / f"{stem}.md").write_text(report)
    payload = {
        "quick": args.quick,
        "machine": machine,
        "seconds": timings,
        "sections": [section.to_json() for section in sections],
    }
    (args.output / f"{stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
