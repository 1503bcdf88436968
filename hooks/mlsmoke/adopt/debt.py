"""``mlsmoke debt [DIR]``: what the baselines hold; ``--update`` shrinks them.

A baseline only shrinks here: a file that passes today leaves it, a code a file no
longer violates leaves its line. A CI step can print the table to show the trend.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.adopt import measure, report
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.textfile import write_all
from mlsmoke.errors import EXIT_OK, UsageError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke debt",
        description="Print the baselines mlsmoke init wrote: per tool, the files "
        "excluded and the codes they violate.",
    )
    parser.add_argument("dir", nargs="?", default=".", type=Path)
    parser.add_argument(
        "--update",
        action="store_true",
        help="re-check the baselined files and drop what passes now",
    )
    parser.add_argument(
        "--files", metavar="TOOL", help="print only TOOL's baselined files, one a line"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    root = args.dir.resolve()
    if not root.is_dir():
        raise UsageError(f"{args.dir}: not a directory")
    project = Project.load(root)
    debt = project.read()
    if args.files:
        print("\n".join(sorted(debt.get(args.files, {}))))
        return EXIT_OK
    if args.update:
        debt = update(project, debt)
    print(report.table(debt))
    return EXIT_OK


def update(project: Project, debt: dict) -> dict:
    """Measure the baselined files without their baseline; keep what still fails."""
    for tool in debt:
        project.write(tool, {})
    now = measure.measure(project, {tool: list(files) for tool, files in debt.items()})
    shrunk = measure.shrink(debt, now.debt)
    project.config.text = project.config.original or ""
    project.flake8.text = project.flake8.original or ""
    project.pyproject.text = project.pyproject.original or ""
    for tool, failures in shrunk.items():
        if failures != debt[tool]:
            project.write(tool, failures)
    write_all(project.files())
    removed = len(
        {path for tool in debt for path in debt[tool] if path not in shrunk[tool]}
    )
    print(f"mlsmoke debt: {removed} file{'s' if removed != 1 else ''} left a baseline")
    return {tool: failures for tool, failures in shrunk.items() if failures}
