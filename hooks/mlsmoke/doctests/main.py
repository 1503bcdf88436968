"""``mlsmoke doctest [FILES...]``: the ``>>>`` examples of the files a commit touches.

The files are read here, and those without ``>>>`` stop here, unimported. The rest run
in one process of the project's own interpreter (:mod:`mlsmoke.doctests.runner`), where
the project's dependencies import.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from mlsmoke import interpreter
from mlsmoke.arguments import files_after_dashes
from mlsmoke.config import find_project_root
from mlsmoke.doctests.formatting import format_results
from mlsmoke.doctests.requirements import required_modules
from mlsmoke.doctests.results import FileResult, results_from_json
from mlsmoke.doctests.selection import has_examples, is_excluded, is_runnable
from mlsmoke.doctests.settings import HOOK, Settings, load_settings
from mlsmoke.errors import EXIT_FAILED, EXIT_OK, EnvironmentProblem, UsageError

RUNNER_MODULE = "mlsmoke.doctests.runner"
_OUTPUT_TAIL_LINES = 30
_FILES_NAMED = 5  # in the message of a runner that died


class ExampleFile(NamedTuple):
    """A file with ``>>>`` in it: how the user named it, where it is, its text."""

    shown: str
    path: Path
    text: str


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(
        files_after_dashes(sys.argv[1:] if argv is None else argv, options=())
    )
    root = find_project_root()
    settings = load_settings(root)
    files = files_with_examples(args.filenames, root, settings)
    if not files:
        return EXIT_OK
    results = run_where_dependencies_import(files, root, settings)
    print(format_results(results), end="")
    failed = any(result.failures or result.file_failure for result in results)
    return EXIT_FAILED if failed else EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke doctest",
        description="Run the >>> examples in Python docstrings and in Markdown, "
        "reStructuredText and .txt documents, in the project's own interpreter.",
    )
    parser.add_argument("filenames", nargs="*", metavar="FILE")
    return parser


def files_with_examples(
    names: Sequence[str], root: Path, settings: Settings
) -> list[ExampleFile]:
    """The named files that are not excluded and contain ``>>>``, each read once."""
    files: dict[Path, ExampleFile] = {}
    for name in names:
        path = Path(os.path.abspath(name))
        if path in files or not is_runnable(path.name):
            continue
        if is_excluded(_relative(path, root), settings.exclude):
            continue
        content = _read(name)
        if has_examples(content):
            files[path] = ExampleFile(name, path, content.decode("utf-8", "replace"))
    return list(files.values())


def run_where_dependencies_import(
    files: list[ExampleFile], root: Path, settings: Settings
) -> list[FileResult]:
    """Run the files in the first interpreter that imports the modules they need.

    The needs are read from the source. A module found missing only at run time (an
    import hidden from that reading) joins them, and the search starts again; when no
    interpreter has them all, the search raises EnvironmentProblem, naming them.
    """
    needs = {
        module: _shown(importer, root)
        for module, importer in required_modules(
            {file.path: file.text for file in files}, root
        ).items()
    }
    configured = interpreter.configured_python(root, HOOK, settings.python)
    while True:
        python = _find_interpreter(root, needs, configured)
        results = run_in_interpreter(python.path, files, root, settings.optionflags)
        missing = {
            result.file_failure.missing: result.path
            for result in results
            if result.file_failure and result.file_failure.missing
        }
        if missing.keys() <= needs.keys():
            return results
        needs.update(missing)


def _find_interpreter(
    root: Path, needs: dict[str, str], configured: tuple[str, str] | None
) -> interpreter.Interpreter:
    """The interpreter that imports ``needs``, a map of module to a file needing it."""
    try:
        return interpreter.find_project_interpreter(root, sorted(needs), configured)
    except EnvironmentProblem as problem:
        first, _, rest = str(problem).partition("\n")
        needed_by = [
            f"  {module} is needed by {path}" for module, path in needs.items()
        ]
        raise EnvironmentProblem("\n".join([first, *sorted(needed_by), rest])) from None


def run_in_interpreter(
    python: Path, files: list[ExampleFile], root: Path, optionflags: Sequence[str]
) -> list[FileResult]:
    """Run every file's examples in one process of ``python``."""
    with tempfile.TemporaryDirectory(prefix="mlsmoke-doctest-") as scratch:
        request, report = Path(scratch, "request.json"), Path(scratch, "report.json")
        request.write_text(
            json.dumps(
                {
                    "root": str(root),
                    "files": [[file.shown, str(file.path)] for file in files],
                    "optionflags": list(optionflags),
                }
            ),
            encoding="utf-8",
        )
        command = interpreter.module_command(
            python, RUNNER_MODULE, str(request), str(report)
        )
        completed = subprocess.run(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        if not report.is_file():
            raise EnvironmentProblem(_no_report_message(python, files, completed))
        return results_from_json(json.loads(report.read_text(encoding="utf-8")))


def _no_report_message(
    python: Path, files: list[ExampleFile], completed: subprocess.CompletedProcess
) -> str:
    output = completed.stdout.rstrip().splitlines()[-_OUTPUT_TAIL_LINES:]
    running = ", ".join(file.shown for file in files[:_FILES_NAMED])
    if len(files) > _FILES_NAMED:
        running += f" and {len(files) - _FILES_NAMED} more"
    lines = [
        f"{python} exited with code {completed.returncode} before reporting "
        f"on {running}"
    ]
    lines += ["its last output:", *(f"  {line}" for line in output)] if output else []
    return "\n".join(lines)


def _shown(path: Path, root: Path) -> str:
    return _relative(path, root).as_posix()


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
