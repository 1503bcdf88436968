"""``mlsmoke strict-mode``: check (or ``--fix``) the strict mode of shell scripts.

Prints one ``path:line:col: CODE message`` line per problem. Exit 0 when clean, 1 when
problems were found or files fixed, 2 when a path or the configuration is unusable.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from mlsmoke.arguments import files_after_dashes
from mlsmoke.project_root import find_project_root, is_project_config
from mlsmoke.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from mlsmoke.strict_mode.checker import (
    Policy,
    Verdict,
    column_of,
    examine,
    line_of,
    printable,
)
from mlsmoke.strict_mode.files import (
    BadPath,
    Script,
    Skipped,
    open_script,
    write_atomically,
)
from mlsmoke.strict_mode.fixer import fix
from mlsmoke.strict_mode.settings import Settings, is_excluded, load_settings

_OPTIONS = ("--fix", "--require-ifs", "--require-pipefail-in-sh", "--verbose", "-v")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke strict-mode",
        description="Check that shell scripts turn on errexit, nounset and pipefail "
        "(`set -euo pipefail`; `set -eu` for sh and dash) before their first command.",
        epilog="Configure in [tool.mlsmoke.strict-mode] of pyproject.toml; silence one "
        "script with `# mlsmoke: disable=strict-mode -- reason` in its header.",
        allow_abbrev=False,
    )
    parser.add_argument("filenames", nargs="*", metavar="FILE")
    parser.add_argument(
        "--fix", action="store_true", help="add the missing options in place"
    )
    parser.add_argument(
        "--require-ifs", action="store_true", help="also demand IFS=$'\\n\\t'"
    )
    parser.add_argument(
        "--require-pipefail-in-sh",
        action="store_true",
        help="demand pipefail in sh and dash scripts too",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="say why files are skipped"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(
        files_after_dashes(sys.argv[1:] if argv is None else argv, _OPTIONS)
    )
    root = find_project_root()
    settings = load_settings(root)
    policy = Policy(
        settings.policy.require_ifs or args.require_ifs,
        settings.policy.require_pipefail_in_sh or args.require_pipefail_in_sh,
    )
    status = EXIT_OK
    for path in args.filenames:
        if is_project_config(path, root):  # its table was validated above
            continue
        status = max(status, _run_one(path, root, settings, policy, args))
    return status


def _run_one(
    path: str, root: Path, settings: Settings, policy: Policy, args: argparse.Namespace
) -> int:
    shown = display(path)
    if settings.exclude and is_excluded(_relative(path, root), settings.exclude):
        return _skip(
            shown, Skipped("excluded by tool.mlsmoke.strict-mode.exclude"), args
        )
    try:
        opened = open_script(path)
        if isinstance(opened, Skipped):
            return _skip(shown, opened, args)
        try:
            return _check(opened, shown, policy, args.fix)
        finally:
            opened.close()
    except BadPath as error:
        print(f"{shown}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # stdout, not the script: the CLI ends quietly
        raise
    except OSError as error:
        print(f"{shown}: error: cannot read: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        print(f"{shown}: error: nested too deeply to check", file=sys.stderr)
        return EXIT_USAGE


def _check(script: Script, shown: str, policy: Policy, fixing: bool) -> int:
    verdict = decide(script, policy)
    if verdict.passed:
        return EXIT_OK
    if fixing:
        script.read_all()
        verdict = decide(script, policy)
        fixed = fix(script.text(), verdict, script.body_start, policy)
        if fixed is not None:
            data = fixed.encode("utf-8", "surrogateescape")
            write_atomically(script.path, data, script.mode)
            print(f"Fixing {shown}")
            return EXIT_FAILED
    text = script.text()
    for problem in verdict.problems:
        line, column = line_of(text, problem.offset), column_of(text, problem.offset)
        print(f"{shown}:{line}:{column}: {problem.code} {problem.message}")
    if fixing:
        print(f"{shown}: cannot fix automatically; edit it by hand")
    return EXIT_FAILED


def decide(script: Script, policy: Policy) -> Verdict:
    """The verdict, reading more of the script only while what it has is too short."""
    while True:
        text = script.text()
        verdict = examine(
            text, script.at_eof, script.dialect, script.body_start, policy
        )
        if verdict is not None:
            return verdict
        script.read_more()


def _skip(shown: str, skipped: Skipped, args: argparse.Namespace) -> int:
    if skipped.loud or args.verbose:
        print(f"{shown}: skipped: {skipped.reason}", file=sys.stderr)
    return EXIT_OK


def _relative(path: str, root: Path) -> PurePosixPath:
    absolute = Path(os.path.abspath(path))
    try:
        return PurePosixPath(absolute.relative_to(root).as_posix())
    except ValueError:
        return PurePosixPath(Path(path).as_posix())


def display(path: str) -> str:
    """The path as printed: control characters (a newline in a name) escaped."""
    return printable(path)


if __name__ == "__main__":
    raise SystemExit(main())
