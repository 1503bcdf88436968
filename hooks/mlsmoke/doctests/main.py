"""``mlsmoke doctest [FILES...]``: the ``>>>`` examples of the files a commit touches.

The files are read here, and those without ``>>>`` stop here, unimported. The rest run
in one process of the project's own interpreter (:mod:`mlsmoke.doctests.runner`), where
the project's dependencies import. What only a run needs (the process, the worker's
client, the report) is imported when one runs: a prose edit, a pass-cache hit at most,
is a commit's most common case.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mlsmoke import interpreter
from mlsmoke.arguments import files_after_dashes
from mlsmoke.config import find_project_root, is_project_config
from mlsmoke.cache_files import CacheNotWritten
from mlsmoke.doctests.import_cache import ImportCache
from mlsmoke.doctests.pass_cache import DoctestPassCache, pass_key, passes_to_store
from mlsmoke.doctests.requirements import parse_imports, required_modules
from mlsmoke.doctests.results import FileResult
from mlsmoke.doctests.selection import has_examples, is_excluded, is_runnable
from mlsmoke.doctests.settings import HOOK, Settings, load_settings
from mlsmoke.errors import (
    EXIT_FAILED,
    EXIT_OK,
    Terminated,
    UsageError,
)

if TYPE_CHECKING:
    from mlsmoke.project_process import WorkerUse

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
    settings = load_settings(root)  # given only pyproject.toml, this is the check
    names = [name for name in args.filenames if not is_project_config(name, root)]
    files = files_with_examples(names, root, settings)
    if not files:
        return EXIT_OK  # no interpreter started
    imports = ImportCache(root)
    passes = _Passes(root, settings, imports, files, use=not args.no_cache)
    pending = [file for file in files if not passes.hit(file)]
    cached = len(files) - len(pending)
    if not pending:
        imports.save()
        if args.verbose:
            noun = "file" if cached == 1 else "files"
            print(f"doctest: {cached} {noun} passed before (cached), none ran")
        return EXIT_OK  # every file passed before, and nothing they ran changed
    from mlsmoke.doctests.formatting import format_results, summary

    started = time.time()
    try:
        results, python = run_where_dependencies_import(
            pending, root, settings, imports
        )
    except (KeyboardInterrupt, Terminated) as stop:
        print(format_results(getattr(stop, "results", [])), end="", flush=True)
        raise
    passes.store(pending, results, python, started)
    imports.save()  # once, with what the scan and the stored passes parsed
    print(format_results(results), end="")
    if args.verbose:
        print(summary(results) + (f"; {cached} cached" if cached else ""))
    failed = any(not result.passed for result in results)
    return EXIT_FAILED if failed else EXIT_OK


class _Passes:
    """The pass cache as this run uses it: keys from the examples' fingerprints."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        imports: ImportCache,
        files: list[ExampleFile],
        use: bool,
    ) -> None:
        self.cache = DoctestPassCache(root, imports.fingerprint)
        self.use = use
        configured = interpreter.configured_python(root, HOOK, settings.python)
        candidates = interpreter.project_candidates(root, configured)
        identities = [interpreter.candidate_identity(c) for c in candidates]
        self.keys = {
            file.shown: pass_key(
                file.shown,
                imports.imports_of(file.path, file.text, parse_imports).fingerprint,
                settings.runner_options(),
                identities,
            )
            for file in files
        }

    def hit(self, file: ExampleFile) -> bool:
        return self.use and self.cache.hit(self.keys[file.shown])

    def store(
        self,
        files: list[ExampleFile],
        results: list[FileResult],
        python: interpreter.Interpreter,
        started: float,
    ) -> None:
        paths = {file.shown: file.path for file in files}
        try:
            for result, modules, packages in passes_to_store(results):
                self.cache.store(
                    self.keys[result.path],
                    paths[result.path],
                    modules,
                    packages,
                    python.passed_over,
                    started,
                )
        except CacheNotWritten as error:
            print(f"doctest: the passes are not cached: {error}", file=sys.stderr)


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
    files: dict[Path, ExampleFile] = {}
    for name in names:
        path = Path(os.path.abspath(name))
        if path in files or not is_runnable(path.name):
            continue
        if is_excluded(_relative(path, root), settings.exclude):
            continue
        content = _read(name)
        if has_examples(content, path.name):
            files[path] = ExampleFile(name, path, content.decode("utf-8", "replace"))
    return list(files.values())


def run_where_dependencies_import(
    files: list[ExampleFile],
    root: Path,
    settings: Settings,
    imports: ImportCache | None = None,
) -> tuple[list[FileResult], interpreter.Interpreter]:
    """Run the files in the first interpreter that imports the modules they need.

    The needs are read from the source (:mod:`.requirements`). A module found missing
    only at run time (an import hidden from that reading) joins them, and the search
    starts again; when no interpreter has them all, the search raises
    EnvironmentProblem, naming them.
    """
    from mlsmoke.doctests.worker_use import worker_use

    imports = imports or ImportCache(root)
    needs = required_modules({file.path: file.text for file in files}, root, imports)
    required = {module: _shown(path, root) for module, path in needs.required.items()}
    wanted = sorted(needs.wanted)
    configured = interpreter.configured_python(root, HOOK, settings.python)
    while True:
        python = _find_interpreter(root, required, wanted, configured)
        warm = worker_use([*required, *wanted])
        results = run_in_interpreter(python.path, files, root, settings, warm)
        missing = {
            result.file_failure.missing: result.path
            for result in results
            if result.file_failure and result.file_failure.missing
        }
        if missing.keys() <= required.keys():
            return results, python
        required.update(missing)


def _find_interpreter(
    root: Path,
    needs: dict[str, str],
    wanted: list[str],
    configured: tuple[str, str] | None,
) -> interpreter.Interpreter:
    """The interpreter that imports ``needs``, a map of module to a file needing it;
    of those, one that imports ``wanted`` too when there is one. When none does, the
    message lists each interpreter tried, what it lacked and the file needing that."""
    return interpreter.find_project_interpreter(
        root, sorted(needs), configured, wanted=wanted, needed_by=needs
    )


def run_in_interpreter(
    python: Path,
    files: list[ExampleFile],
    root: Path,
    settings: Settings,
    warm: WorkerUse,
) -> list[FileResult]:
    """Run every file's examples in ``python``, each file within its time limit."""
    from mlsmoke.doctests.supervise import Job, run_with_time_limits

    jobs = [Job(file.shown, file.path) for file in files]
    options = settings.runner_options()
    return run_with_time_limits(python, jobs, root, options, settings.timeout, warm)


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
