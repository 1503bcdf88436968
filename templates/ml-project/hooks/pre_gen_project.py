"""Stop generation with a clear message when an answer cannot work.

Cookiecutter renders this file before running it. The answers arrive as JSON inside a
raw string, which holds any character they contain.
"""

from __future__ import annotations

import json
import keyword
import re
import sys

ANSWERS = json.loads(r"""{{ cookiecutter | tojson }}""")

SLUG = re.compile(r"[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*")
PACKAGE = re.compile(r"[a-z_][a-z0-9_]*")
# Names a project package would shadow, or be shadowed by, on sys.path.
TAKEN = {"mlsmoke", "torch", "tests", "test", "src", "scripts", "train"}
MIN_PYTHON = (3, 10)


def slug_problem(slug: str) -> str | None:
    if not SLUG.fullmatch(slug):
        return (
            "must be lowercase letters and digits, words joined by '-', '_' or '.', "
            "starting with a letter (e.g. 'spiral-classifier')"
        )
    return None


def package_problem(name: str) -> str | None:
    if not PACKAGE.fullmatch(name):
        return (
            "must be a lowercase Python identifier: letters, digits and '_', "
            "not starting with a digit (e.g. 'spiral_classifier')"
        )
    if keyword.iskeyword(name):
        return "is a Python keyword"
    if name in sys.stdlib_module_names or name in TAKEN:
        return "would shadow (or be shadowed by) a module of the same name"
    return None


def python_version_problem(version: str) -> str | None:
    match = re.fullmatch(r"3\.(\d+)", version)
    if not match or (3, int(match.group(1))) < MIN_PYTHON:
        return "must be a Python version like '3.11', at least 3.10"
    return None


def torch_version_problem(version: str) -> str | None:
    # An exact pin: an open range lets pip pick a multi-GB CUDA build.
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        return "must be an exact release like '2.13.0'"
    return None


CHECKS = {
    "project_slug": slug_problem,
    "package_name": package_problem,
    "python_version": python_version_problem,
    "torch_version": torch_version_problem,
}


def main() -> int:
    problems = [
        f"{key} {ANSWERS[key]!r} {problem}"
        for key, check in CHECKS.items()
        if (problem := check(ANSWERS[key])) is not None
    ]
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
