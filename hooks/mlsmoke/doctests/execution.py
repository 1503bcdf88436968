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
import random
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from mlsmoke.doctests.checker import PytestFlagsChecker
from mlsmoke.doctests.declared import skip_declared
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
    SkippedExample,
)
from mlsmoke.overfit.process.imports import project_modules

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


class RunOptions(NamedTuple):
    """How the examples run: ``Settings.runner_options()`` on the runner's side."""

    optionflags: int
    seed: int | None = None
    missing_dependency: str = "skip"


class CollectingRunner(doctest.DocTestRunner):
    """A DocTestRunner that keeps its failures as records instead of printing them,
    and tells ``progress`` (when given) each example it starts.

    An example that needs a package the interpreter lacks is skipped with the rest of
    its docstring (when ``missing_dependency`` is "skip"); one that raises
    KeyboardInterrupt is a failure like any other exception (see :meth:`run_test`).
    """

    def __init__(
        self, options: RunOptions, root: Path, progress: Any = None, shown: str = ""
    ) -> None:
        super().__init__(
            checker=PytestFlagsChecker(), verbose=False, optionflags=options.optionflags
        )
        self.options, self.root = options, root
        self.collected: list[ExampleFailure] = []
        self.skipped: list[SkippedExample] = []
        self.started = 0
        self.started_then_skipped = 0  # began, and met a missing package
        self.running: tuple[doctest.DocTest, doctest.Example] | None = None
        self._fakeout = CappedOutput()
        self.progress, self.shown = progress, shown
        self.seeding = Seeding(options.seed)

    @property
    def attempted(self) -> int:
        return self.started - self.started_then_skipped

    def run_test(self, test: doctest.DocTest) -> None:
        """Run one docstring's examples, in a namespace cleared afterwards."""
        self.seeding.before_docstring()
        try:
            while test.examples:
                try:
                    self.run(test, out=lambda text: None, clear_globs=False)
                    break
                except KeyboardInterrupt as error:
                    test = self._after_interrupt(test, error)
        finally:
            test.globs.clear()

    def _after_interrupt(
        self, test: doctest.DocTest, error: KeyboardInterrupt
    ) -> doctest.DocTest:
        """Record the interrupted example; the docstring's examples after it."""
        if self.running is None or self.running[0] is not test:
            return doctest.DocTest([], test.globs, test.name, test.filename, 0, "")
        _, example = self.running
        got = _project_traceback(error.__traceback__) + "".join(
            traceback.format_exception_only(type(error), error)
        )
        self._collect(_example_failure(test, example, got, raised=True))
        rest = test.examples[test.examples.index(example) + 1 :]
        return doctest.DocTest(
            rest, test.globs, test.name, test.filename, test.lineno, test.docstring
        )

    def report_start(self, out, test, example) -> None:  # type: ignore[override]
        self.started += 1
        self.running = (test, example)
        self.seeding.after_imports()
        if self.progress is not None:
            line = (test.lineno or 0) + example.lineno + 1
            self.progress.example_started(self.shown, line, example.source)

    def report_failure(self, out, test, example, got) -> None:  # type: ignore[override]
        self._collect(_example_failure(test, example, got, raised=False))

    def report_unexpected_exception(  # type: ignore[override]
        self, out, test, example, exc_info
    ) -> None:
        missing = missing_dependency(exc_info[1], self.root)
        if missing and self.options.missing_dependency == "skip":
            self._skip_rest(test, example, f"needs {missing}, which is not installed")
            return
        got = "".join(traceback.format_exception_only(*exc_info[:2]))
        got = _project_traceback(exc_info[2]) + got
        self._collect(_example_failure(test, example, got, raised=True))

    def _collect(self, failure: ExampleFailure) -> None:
        self.collected.append(failure)
        if self.progress is not None:
            self.progress.example_failed(self.shown, failure)

    def _skip_rest(self, test, example, reason: str) -> None:
        """Skip ``example`` and the examples after it in its docstring: they build on
        what it would have imported."""
        line = (test.lineno or 0) + example.lineno + 1
        self.skipped.append(SkippedExample(line, test.name, reason))
        self.started_then_skipped += 1
        for later in test.examples[test.examples.index(example) + 1 :]:
            later.options[doctest.SKIP] = True


class Seeding:
    """With a seed, ``random``, numpy and torch start each docstring from it: those
    imported before the docstring at its start, the others right after the example
    that imported them."""

    MODULES = ("random", "numpy", "torch")

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self.seeded: set[str] = set()

    def before_docstring(self) -> None:
        if self.seed is not None:
            self.seeded = set()
            self.after_imports()

    def after_imports(self) -> None:
        if self.seed is None or len(self.seeded) == len(self.MODULES):
            return
        for name in self.MODULES:
            module = sys.modules.get(name) if name != "random" else random
            if module is not None and name not in self.seeded:
                self.seeded.add(name)
                _seed(name, module, self.seed)


def _seed(name: str, module: ModuleType, seed: int) -> None:
    try:
        if name == "random":
            module.seed(seed)
        elif name == "numpy":
            module.random.seed(seed)
        else:
            module.manual_seed(seed)
    except Exception:  # noqa: BLE001 - a half-imported or odd module: left unseeded
        pass


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
    _extend_sys_path(files, root)
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
            module = _import_file(path, root)
            tests = _module_tests(module)
            tests = skip_declared(tests, module, runner.skipped)
        else:
            tests = _document_tests(path)
        for test in tests:
            runner.run_test(test)
    except FileFailureError as error:
        return _result(shown, runner, error.failure)
    except Exception as error:  # odd objects can break doctest's finder: fail one file
        failure = FileFailure("cannot run the examples", _error_text(error), "")
        return _result(shown, runner, failure)
    return _result(shown, runner, None)


def _result(
    shown: str, runner: CollectingRunner, failure: FileFailure | None
) -> FileResult:
    return FileResult(
        shown, runner.attempted, runner.collected, failure, runner.skipped
    )


class FileFailureError(Exception):
    def __init__(self, failure: FileFailure) -> None:
        super().__init__(failure.summary)
        self.failure = failure


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
    return FileFailure(f"cannot import {name}", text, missing_dependency(error, root))


def _error_text(error: BaseException) -> str:
    text = _project_traceback(error.__traceback__)
    return text + "".join(traceback.format_exception_only(type(error), error))


def missing_dependency(error: BaseException, root: Path) -> str:
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
        flags |= doctest.OPTIONFLAGS_BY_NAME[name]  # pytest's: registered by .checker
    return flags
