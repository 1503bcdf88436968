"""``mlsmoke basics [--checks IDS]... [--args ID=ARGS]... FILES``: pre-commit-hooks'
checks in one interpreter.

pre-commit starts one interpreter per hook, and the eight checks a project usually
takes from pre-commit-hooks (end-of-file-fixer, trailing-whitespace, check-yaml, ...)
each spend more time starting than checking. This hook imports pre-commit-hooks from
its own environment (its ``additional_dependencies``) and runs each check's ``main``
in turn, on the files that check's own hook would get, with the same arguments,
output and effect: a fixer rewrites a file as it would, and the hook fails when any
check fails. Each line a check prints starts with its id. A check named in pre-commit's
``SKIP`` is skipped, as its own hook would be.

Exit code 1 when a check failed or fixed a file, 2 for an unknown check id, arguments
a check refuses, or a missing pre-commit-hooks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import sys
from collections.abc import Sequence

from mlsmoke.arguments import files_after_dashes
from mlsmoke.basics.checks import CHECKS, Check
from mlsmoke.errors import EXIT_USAGE, EnvironmentProblem, UsageError

_OPTIONS = ("--checks", "--args")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mlsmoke basics",
        description="pre-commit-hooks' checks in one interpreter, each on the files"
        " its own hook would get.",
    )
    parser.add_argument(
        "--checks",
        action="append",
        metavar="IDS",
        help="hook ids to run, comma-separated or one --checks each"
        f" (default: all of {', '.join(CHECKS)})",
    )
    parser.add_argument(
        "--args",
        action="append",
        default=[],
        metavar="ID=ARGS",
        help="arguments for one check, as its own hook's args: "
        "check-added-large-files=--maxkb=1000",
    )
    parser.add_argument("filenames", nargs="*", metavar="FILE")
    args = parser.parse_args(
        files_after_dashes(sys.argv[1:] if argv is None else argv, _OPTIONS)
    )
    checks = _chosen(args.checks) if args.checks else list(CHECKS.values())
    extra = _check_args(args.args)
    skipped = {name.strip() for name in os.environ.get("SKIP", "").split(",")}
    tags = _tags(args.filenames)
    worst = 0
    for check in checks:
        files = check.files(tags)
        if check.id in skipped or not files:
            continue
        worst = max(worst, _run(check, [*extra.get(check.id, []), *files]))
    return worst


def _chosen(given: Sequence[str]) -> list[Check]:
    names = (name.strip() for option in given for name in option.split(","))
    wanted = [name for name in names if name]
    unknown = [name for name in wanted if name not in CHECKS]
    if unknown:
        raise UsageError(
            f"--checks: no check {', '.join(unknown)}; the checks are"
            f" {', '.join(CHECKS)}"
        )
    return [CHECKS[name] for name in wanted]


def _check_args(given: Sequence[str]) -> dict[str, list[str]]:
    extra: dict[str, list[str]] = {}
    for option in given:
        name, equals, value = option.partition("=")
        if not equals or name not in CHECKS:
            raise UsageError(
                f"--args {option}: give ID=ARGS, ID one of {', '.join(CHECKS)}"
            )
        try:
            extra.setdefault(name, []).extend(shlex.split(value))
        except ValueError as error:
            raise UsageError(f"--args {option}: {error}") from None
    return extra


def _tags(paths: Sequence[str]) -> dict[str, frozenset[str]]:
    try:
        from identify.identify import tags_from_path
    except ImportError:
        raise _missing("identify") from None
    tags = {}
    for path in paths:
        try:
            tags[path] = frozenset(tags_from_path(path))
        except ValueError:  # identify's answer for a path that is not there
            raise UsageError(f"{path}: no such file") from None
    return tags


def _run(check: Check, argv: list[str]) -> int:
    try:
        main = check.main()
    except ImportError:
        raise _missing("pre-commit-hooks") from None
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse on bad --args, or --help
            code = stop.code if isinstance(stop.code, int) else int(bool(stop.code))
            if isinstance(stop.code, str):
                print(stop.code)
        except Exception as error:  # e.g. git's answer outside a repository
            print(f"could not run: {type(error).__name__}: {error}")
            code = EXIT_USAGE
    for line in output.getvalue().splitlines():
        print(f"{check.id}: {line}")
    return EXIT_USAGE if code == EXIT_USAGE else int(bool(code))


def _missing(distribution: str) -> EnvironmentProblem:
    return EnvironmentProblem(
        f"mlsmoke basics: {distribution} is not installed where the hook runs; the"
        " hook's additional_dependencies install it (pre-commit-hooks and identify,"
        " pinned in mlsmoke's .pre-commit-hooks.yaml): keep both if you set your own"
    )
