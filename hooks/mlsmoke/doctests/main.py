"""``mlsmoke doctest [FILES...]``: the ``>>>`` examples of the files a commit touches.

The files are read here, and those without ``>>>`` stop here, unimported. The rest run
in one process of the project's own interpreter (:mod:`.project_run`), where the
project's dependencies import. A prose edit is a commit's most common case: when no
file has an example and the project's config is not among the files, the hook ends
before it reads the config or imports what a run needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mlsmoke.arguments import files_after_dashes
from mlsmoke.project_root import find_project_root, is_project_config
from mlsmoke.doctests.selection import has_examples, is_excluded, is_runnable
from mlsmoke.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from mlsmoke.doctests.settings import Settings

OPTIONS = ("--no-cache", "-v", "--verbose")


class ExampleFile(NamedTuple):
    """A file with ``>>>`` in it: how the user named it, where it is, its text."""

    shown: str
    path: Path
    text: str


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(
        files_after_dashes(sys.argv[1:] if argv is None else argv, options=OPTIONS)
    )
    root = find_project_root()
    names = [name for name in args.filenames if not is_project_config(name, root)]
    config_named = len(names) < len(args.filenames)
    candidates = _read_examples(names)
    if not candidates and not config_named:
        return EXIT_OK  # nothing to run, nothing of the config's changed
    from mlsmoke.doctests.settings import load_settings

    settings = load_settings(root)  # given only pyproject.toml, this is the check
    files = _not_excluded(candidates, root, settings)
    if not files:
        return EXIT_OK  # no interpreter started
    from mlsmoke.doctests.project_run import run_files

    return run_files(files, root, settings, not args.no_cache, args.verbose)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke doctest",
        description="Run the >>> examples in Python docstrings and in Markdown, "
        "reStructuredText and .txt documents, in the project's own interpreter.",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="run even the files that passed before"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="end with the summary line, also when every example passed",
    )
    parser.add_argument("filenames", nargs="*", metavar="FILE")
    return parser


def files_with_examples(
    names: Sequence[str], root: Path, settings: Settings
) -> list[ExampleFile]:
    """The named files that are not excluded and contain ``>>>``, each read once."""
    return _not_excluded(_read_examples(names), root, settings)


def _read_examples(names: Sequence[str]) -> list[ExampleFile]:
    """The named files that contain an example, each read once."""
    files: dict[Path, ExampleFile] = {}
    for name in names:
        path = Path(os.path.abspath(name))
        if path in files or not is_runnable(path.name):
            continue
        content = _read(name)
        if has_examples(content, path.name):
            files[path] = ExampleFile(name, path, content.decode("utf-8", "replace"))
    return list(files.values())


def _not_excluded(
    files: list[ExampleFile], root: Path, settings: Settings
) -> list[ExampleFile]:
    return [
        file
        for file in files
        if not is_excluded(_relative(file.path, root), settings.exclude)
    ]


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.relative_to(root)
    except ValueError:
        return path


def _read(name: str) -> bytes:
    try:
        return Path(name).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{name}: is a directory, not a file") from None
    except OSError as error:
        raise UsageError(f"{name}: cannot read: {error.strerror}") from None


if __name__ == "__main__":
    raise SystemExit(main())
