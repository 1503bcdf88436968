"""The examples of the files that have some, run in the project's own interpreter.

What only a run needs (the interpreter search, the pass cache, the worker's client,
the report) is imported here, after :mod:`.main` has found a file with ``>>>``: a
prose edit never imports it. A pass-cache hit goes no further than :class:`Passes`:
the source reading of :mod:`.requirements` is imported when a file's imports are not
in the import cache, and the rest when a file runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mlsmoke import interpreter
from mlsmoke.cache_files import CacheNotWritten
from mlsmoke.doctests.import_cache import ImportCache, ParsedImports
from mlsmoke.doctests.pass_cache import DoctestPassCache, pass_key, passes_to_store
from mlsmoke.doctests.settings import HOOK, Settings
from mlsmoke.errors import EXIT_FAILED, EXIT_OK, Terminated

if TYPE_CHECKING:
    from mlsmoke.doctests.main import ExampleFile
    from mlsmoke.doctests.results import FileResult
    from mlsmoke.project_process import WorkerUse


def run_files(
    files: list[ExampleFile],
    root: Path,
    settings: Settings,
    use_cache: bool,
    verbose: bool,
) -> int:
    """Run the files' examples, those that passed before and changed nothing they
    ran excepted; print the report and return the exit code."""
    imports = ImportCache(root)
    passes = Passes(root, settings, imports, files, use=use_cache)
    pending = [file for file in files if not passes.hit(file)]
    cached = len(files) - len(pending)
    if not pending:
        imports.save()
        if verbose:
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
    if verbose:
        print(summary(results) + (f"; {cached} cached" if cached else ""))
    failed = any(not result.passed for result in results)
    return EXIT_FAILED if failed else EXIT_OK


class Passes:
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
                imports.imports_of(file.path, file.text, _parse_imports).fingerprint,
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


def _parse_imports(path: Path, text: str) -> ParsedImports:
    from mlsmoke.doctests.requirements import parse_imports

    return parse_imports(path, text)


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
    from mlsmoke.doctests.requirements import required_modules
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
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
