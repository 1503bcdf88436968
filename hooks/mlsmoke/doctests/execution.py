"""Run the examples of many files, inside the project's interpreter.

Standard library only. Python files are imported under their real module name
(``file_import.py``), so relative imports and package state work and ``if __name__ ==
"__main__":`` blocks do not run. Documents get a fresh namespace each. The runner
(``collecting_runner.py``) keeps failures as records; this module gathers them per
file, with the modules each file's examples imported.
"""

from __future__ import annotations

import doctest
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from mlsmoke.doctests.collecting_runner import CollectingRunner, RunOptions
from mlsmoke.doctests.declared import skip_declared
from mlsmoke.doctests.documents import document_kind, example_text
from mlsmoke.doctests.failures import FileFailureError, error_text
from mlsmoke.doctests.file_import import extend_sys_path, import_file
from mlsmoke.doctests.results import FileFailure, FileResult
from mlsmoke.overfit.process.imports import project_modules


def run_files(
    files: list[tuple[str, Path]],
    root: Path,
    options: RunOptions,
    progress: Any = None,
) -> list[FileResult]:
    """Run the examples of each ``(shown path, path)``; one result per file.

    ``progress``, when given, hears ``file_started(shown)``, ``example_started(shown,
    line, source)``, ``example_failed(shown, failure)`` and ``file_done(result)``.
    """
    extend_sys_path(files, root)
    results: list[FileResult] = []
    imports = ImportsSeen(root)
    for shown, path in files:
        if progress is not None:
            progress.file_started(shown)
        result = _run_file(shown, path, root, options, progress)
        result = result._replace(**imports.new())
        results.append(result)
        if progress is not None:
            progress.file_done(result)
    return results


class ImportsSeen:
    """The modules imported since the last call: project files, and third-party
    top-level modules with their files (what the pass cache's entries depend on)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: set[str] = set()

    def new(self) -> dict[str, list]:
        fresh = [name for name in list(sys.modules) if name not in self.seen]
        self.seen.update(fresh)
        modules = [sys.modules[name] for name in fresh if name in sys.modules]
        project = project_modules(self.root, modules)
        packages = [
            [module.__name__, module.__file__]
            for module in modules
            if _is_third_party(module, self.root)
        ]
        return {"modules": project, "packages": packages}


def _is_third_party(module: ModuleType, root: Path) -> bool:
    name = getattr(module, "__name__", "")
    found = getattr(module, "__file__", None)
    if not isinstance(name, str) or "." in name or name in sys.stdlib_module_names:
        return False
    if not isinstance(found, str) or not os.path.isabs(found):
        return False
    return not project_modules(root, [module]) and not name.startswith("mlsmoke")


def _run_file(
    shown: str, path: Path, root: Path, options: RunOptions, progress: Any = None
) -> FileResult:
    runner = CollectingRunner(options, root, progress, shown)
    is_python = document_kind(path.name) == "python"
    try:
        if is_python:
            module = import_file(path, root)
            tests = _module_tests(module)
            tests = skip_declared(tests, module, runner.skipped)
        else:
            tests = _document_tests(path)
        for test in tests:
            runner.run_test(test)
    except FileFailureError as error:
        return _result(shown, runner, error.failure)
    except Exception as error:  # odd objects can break doctest's finder: fail one file
        failure = FileFailure("cannot run the examples", error_text(error), "")
        return _result(shown, runner, failure)
    return _result(shown, runner, None)


def _result(
    shown: str, runner: CollectingRunner, failure: FileFailure | None
) -> FileResult:
    return FileResult(
        shown, runner.attempted, runner.collected, failure, runner.skipped
    )


def _module_tests(module: ModuleType) -> list[doctest.DocTest]:
    try:
        tests = doctest.DocTestFinder().find(module, module.__name__)
    except ValueError as error:
        raise FileFailureError(FileFailure("cannot parse the examples", str(error), ""))
    return sorted(tests, key=lambda test: (test.lineno or 0, test.name))


def _document_tests(path: Path) -> list[doctest.DocTest]:
    try:
        text = example_text(path.read_text(encoding="utf-8"), document_kind(path.name))
    except (OSError, UnicodeDecodeError) as error:
        raise FileFailureError(FileFailure("cannot read the file", str(error), ""))
    parser = doctest.DocTestParser()
    globs = {"__name__": "__main__", "__file__": str(path)}
    try:
        return [parser.get_doctest(text, globs, path.name, str(path), 0)]
    except ValueError as error:
        raise FileFailureError(FileFailure("cannot parse the examples", str(error), ""))


def option_flags(names: list[str]) -> int:
    flags = 0
    for name in names:
        flags |= doctest.OPTIONFLAGS_BY_NAME[name]  # pytest's: registered by .checker
    return flags
