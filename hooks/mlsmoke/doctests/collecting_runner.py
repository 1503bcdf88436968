"""The doctest runner that keeps failures as records: each example's output capped,
a docstring's namespace cleared after it, an interrupt or a missing package
recorded rather than raised, and the random generators seeded per docstring.

Standard library only: it runs inside the project's interpreter.
"""

from __future__ import annotations

import doctest
import random
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from mlsmoke.doctests.checker import PytestFlagsChecker
from mlsmoke.doctests.failures import (
    example_failure,
    missing_dependency,
    project_traceback,
)
from mlsmoke.doctests.results import ExampleFailure, SkippedExample

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
        got = project_traceback(error.__traceback__) + "".join(
            traceback.format_exception_only(type(error), error)
        )
        self._collect(example_failure(test, example, got, raised=True))
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
        self._collect(example_failure(test, example, got, raised=False))

    def report_unexpected_exception(  # type: ignore[override]
        self, out, test, example, exc_info
    ) -> None:
        missing = missing_dependency(exc_info[1], self.root)
        if missing and self.options.missing_dependency == "skip":
            self._skip_rest(test, example, f"needs {missing}, which is not installed")
            return
        got = "".join(traceback.format_exception_only(*exc_info[:2]))
        got = project_traceback(exc_info[2]) + got
        self._collect(example_failure(test, example, got, raised=True))

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
