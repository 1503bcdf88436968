"""Run the examples of many files, inside the project's interpreter.

Standard library only. Python files are imported under their real module name, so
relative imports and package state work and ``if __name__ == "__main__":`` blocks do not
run. Documents get a fresh namespace each.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from mlsmoke.doctests.documents import document_kind, example_text
from mlsmoke.doctests.modules import (
    is_local_module,
    locate_module,
    project_source_roots,
)
from mlsmoke.doctests.results import (
    ExampleFailure,
    FileFailure,
    FileResult,
)

# Frames from these files are machinery, never the user's code.
_MACHINERY = (
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
    os.path.dirname(os.path.abspath(importlib.__file__)) + os.sep,
    os.path.abspath(doctest.__file__),
    "<frozen",
)


# Output kept per example: an example printing in a loop must not fill the memory.
OUTPUT_CAP = 256 * 1024  # characters


class CappedOutput(doctest._SpoofOut):  # type: ignore[name-defined]
    """doctest's capture of an example's output, keeping its first ``cap``
    characters and counting the rest."""

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        super().__init__()
        self.cap, self.dropped = cap, 0

    def write(self, text: str) -> int:
        room = max(self.cap - self.tell(), 0)
        if len(text) > room:
            self.dropped += len(text) - room
            super().write(text[:room])
            return len(text)
        return super().write(text)

    def getvalue(self) -> str:
        value = super().getvalue()
        if self.dropped:
            value += f"... {self.dropped} more characters, not kept\n"
        return value

    def truncate(self, size: int | None = None) -> int:  # type: ignore[override]
        self.dropped = 0
        return super().truncate(size)


class CollectingRunner(doctest.DocTestRunner):
    """A DocTestRunner that keeps its failures as records instead of printing them,
    and tells ``progress`` (when given) each example it starts."""

    def __init__(self, optionflags: int, progress: Any = None, shown: str = "") -> None:
        super().__init__(verbose=False, optionflags=optionflags)
        self.collected: list[ExampleFailure] = []
        self._fakeout = CappedOutput()
        self.progress, self.shown = progress, shown

    def report_start(self, out, test, example) -> None:  # type: ignore[override]
        if self.progress is not None:
            line = (test.lineno or 0) + example.lineno + 1
            self.progress.example_started(self.shown, line, example.source)

    def report_failure(self, out, test, example, got) -> None:  # type: ignore[override]
        self.collected.append(_example_failure(test, example, got, raised=False))

    def report_unexpected_exception(  # type: ignore[override]
        self, out, test, example, exc_info
    ) -> None:
        got = "".join(traceback.format_exception_only(*exc_info[:2]))
        got = _project_traceback(exc_info[2]) + got
        self.collected.append(_example_failure(test, example, got, raised=True))


def run_files(
    files: list[tuple[str, Path]], root: Path, optionflags: int, progress: Any = None
) -> list[FileResult]:
    """Run the examples of each ``(shown path, path)``; one result per file.

    ``progress``, when given, hears ``file_started(shown)``, ``example_started(shown,
    line, source)`` and ``file_done(results so far)``.
    """
    _extend_sys_path(files, root)
    results: list[FileResult] = []
    for shown, path in files:
        if progress is not None:
            progress.file_started(shown)
        results.append(_run_file(shown, path, root, optionflags, progress))
        if progress is not None:
            progress.file_done(results)
    return results


def _run_file(
    shown: str, path: Path, root: Path, optionflags: int, progress: Any = None
) -> FileResult:
    runner = CollectingRunner(optionflags, progress, shown)
    is_python = document_kind(path.name) == "python"
    try:
        for test in _module_tests(path, root) if is_python else _document_tests(path):
            runner.run(test, out=lambda text: None, clear_globs=True)
    except FileFailureError as error:
        return FileResult(shown, runner.tries, runner.collected, error.failure)
    except Exception as error:  # odd objects can break doctest's finder: fail one file
        failure = FileFailure("cannot run the examples", _error_text(error), "")
        return FileResult(shown, runner.tries, runner.collected, failure)
    return FileResult(shown, runner.tries, runner.collected, None)


class FileFailureError(Exception):
    def __init__(self, failure: FileFailure) -> None:
        super().__init__(failure.summary)
        self.failure = failure


def _module_tests(path: Path, root: Path) -> list[doctest.DocTest]:
    module = _import_file(path, root)
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


def _import_file(path: Path, root: Path) -> ModuleType:
    """The file's module, imported under its real name when it can have it."""
    real_name = locate_module(path, root).name
    # A top-level json.py loses its name to the json module this runner already uses.
    by_name = bool(real_name) and _is_file_of(sys.modules.get(real_name), path, True)
    name = real_name if by_name else _script_name(path)
    try:
        module = importlib.import_module(name) if by_name else _load(name, path)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: B036 - a module may raise SystemExit
        raise FileFailureError(_import_failure(name, error, root)) from None
    if not _is_file_of(module, path, False):
        found = getattr(module, "__file__", None) or "a namespace package"
        detail = f"{name} is {found}, not this file"
        raise FileFailureError(FileFailure(f"cannot import {name}", detail, ""))
    return module


def _is_file_of(module: ModuleType | None, path: Path, default: bool) -> bool:
    """Whether ``module`` was loaded from ``path``; ``default`` when there is none."""
    if module is None:
        return default
    found = getattr(module, "__file__", None)
    try:
        return bool(found) and os.path.samefile(found, path)
    except OSError:  # a module whose file is gone
        return False


def _load(name: str, path: Path) -> ModuleType:
    """Import a file whose name is no module name (``my-script.py``, ``bin/tool``)."""
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def _script_name(path: Path) -> str:
    stem = path.name[: -len(path.suffix)] if path.suffix == ".py" else path.name
    cleaned = "".join(c if c.isalnum() else "_" for c in stem)
    return f"_mlsmoke_doctest_{cleaned}"  # unique: never a real module's name


def _import_failure(name: str, error: BaseException, root: Path) -> FileFailure:
    text = _error_text(error)
    return FileFailure(f"cannot import {name}", text, _missing_dependency(error, root))


def _error_text(error: BaseException) -> str:
    text = _project_traceback(error.__traceback__)
    return text + "".join(traceback.format_exception_only(type(error), error))


def _missing_dependency(error: BaseException, root: Path) -> str:
    """The top-level module the interpreter lacks, when it is a project dependency."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return ""
    top_level = error.name.partition(".")[0]
    if is_local_module(top_level, project_source_roots(root)):
        return ""
    try:
        installed = importlib.util.find_spec(top_level) is not None
    except (ImportError, ValueError):
        installed = False
    return "" if installed else top_level


def _project_traceback(tb) -> str:
    """The traceback's frames, without the runner's own and importlib's."""
    frames = [
        frame
        for frame in traceback.extract_tb(tb)
        if not frame.filename.startswith(_MACHINERY)
    ]
    if not frames:
        return ""
    return "Traceback (most recent call last):\n" + "".join(
        traceback.format_list(frames)
    )


def _example_failure(test, example, got: str, raised: bool) -> ExampleFailure:
    return ExampleFailure(
        line=(test.lineno or 0) + example.lineno + 1,
        name=test.name,
        source=example.source,
        want=example.want,
        got=got,
        raised=raised,
    )


def _extend_sys_path(files: list[tuple[str, Path]], root: Path) -> None:
    """Put every file's source root first on sys.path, and script dirs last."""
    search_roots, script_dirs = [], []
    for _, path in files:
        if document_kind(path.name) == "python":
            location = locate_module(path, root)
            search_roots.append(str(location.search_root))
            if location.script_dir is not None:
                script_dirs.append(str(location.script_dir))
    search_roots += [str(directory) for directory in project_source_roots(root)]
    for directory in reversed(list(dict.fromkeys(search_roots))):
        if directory in sys.path:
            sys.path.remove(directory)
        sys.path.insert(0, directory)
    sys.path += [d for d in dict.fromkeys(script_dirs) if d not in sys.path]


def option_flags(names: list[str]) -> int:
    flags = 0
    for name in names:
        flags |= doctest.OPTIONFLAGS_BY_NAME[name]
    return flags
