"""What a failing example or file shows: the project's own frames, never the
runner's or importlib's, and the package the interpreter lacks.

Standard library only: it runs inside the project's interpreter.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import os
import traceback
from pathlib import Path

from mlsmoke.doctests.modules import is_local_module, project_source_roots
from mlsmoke.doctests.results import ExampleFailure, FileFailure

# Frames from these files are machinery, never the user's code.
_MACHINERY = (
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
    os.path.dirname(os.path.abspath(importlib.__file__)) + os.sep,
    os.path.abspath(doctest.__file__),
    "<frozen",
)


class FileFailureError(Exception):
    def __init__(self, failure: FileFailure) -> None:
        super().__init__(failure.summary)
        self.failure = failure


def import_failure(name: str, error: BaseException, root: Path) -> FileFailure:
    text = error_text(error)
    return FileFailure(f"cannot import {name}", text, missing_dependency(error, root))


def error_text(error: BaseException) -> str:
    text = project_traceback(error.__traceback__)
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


def project_traceback(tb) -> str:
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


def example_failure(test, example, got: str, raised: bool) -> ExampleFailure:
    return ExampleFailure(
        line=(test.lineno or 0) + example.lineno + 1,
        name=test.name,
        source=example.source,
        want=example.want,
        got=got,
        raised=raised,
    )
