"""Where in the project's own code an error was raised: the innermost frame of a
traceback outside installed packages, the standard library and mlsmoke.

A module's name says where a failure happened in the model's tree; this line says
which line of the project's code to read (``model.py:187: x = self.proj(h)``), also
when the tensors met in a helper function or the loss rather than in a module.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from collections.abc import Sequence
from pathlib import PurePath

import mlsmoke

_INSTALLED = {"site-packages", "dist-packages"}


def library_directories() -> tuple[str, ...]:
    """The directories no project code lives in: mlsmoke's package and the standard
    library (installed packages are told by their directory's name)."""
    paths = sysconfig.get_paths()
    found = [os.path.dirname(mlsmoke.__file__), paths["stdlib"], paths["platstdlib"]]
    return tuple(dict.fromkeys(os.path.realpath(path) for path in found))


def is_project_file(filename: str, libraries: Sequence[str]) -> bool:
    """Whether ``filename`` (a frame's) is the project's: a real file, not in an
    installed package nor under one of ``libraries``.

    >>> is_project_file("/p/model.py", ["/usr/lib/python3.12"])
    True
    >>> is_project_file("/p/.venv/lib/python3.12/site-packages/torch/nn/linear.py", [])
    False
    >>> is_project_file("<frozen runpy>", [])
    False
    """
    if filename.startswith("<"):  # <string>, <frozen ...>: no file to open
        return False
    if _INSTALLED & set(PurePath(filename).parts):
        return False
    real = os.path.realpath(filename)
    return not any(real == lib or real.startswith(lib + os.sep) for lib in libraries)


def innermost_project_frame(
    frames: Sequence[traceback.FrameSummary], libraries: Sequence[str]
) -> traceback.FrameSummary | None:
    """The last (innermost) of ``frames`` in the project's code."""
    for frame in reversed(frames):
        if is_project_file(frame.filename, libraries):
            return frame
    return None


def frame_line(frame: traceback.FrameSummary, working_directory: str | None) -> str:
    """``model.py:187: x = self.proj(h)``: the path relative to ``working_directory``
    when it is under it.

    >>> frame = traceback.FrameSummary("/p/model.py", 187, "forward",
    ...                                line="    x = self.proj(h)")
    >>> frame_line(frame, "/p")
    'model.py:187: x = self.proj(h)'
    >>> frame_line(frame, "/elsewhere")
    '/p/model.py:187: x = self.proj(h)'
    """
    path = frame.filename
    if working_directory:
        relative = os.path.relpath(path, working_directory)
        if not relative.startswith(os.pardir):
            path = relative
    code = (frame.line or "").strip()
    return f"{path}:{frame.lineno}: {code}" if code else f"{path}:{frame.lineno}"


def raised_at(error: BaseException | None, working_directory: str | None) -> str | None:
    """The innermost line of the project's code ``error`` was raised through, as
    :func:`frame_line` shows it; None when no frame is the project's."""
    if error is None or error.__traceback__ is None:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    frame = innermost_project_frame(frames, library_directories())
    return None if frame is None else frame_line(frame, working_directory)
