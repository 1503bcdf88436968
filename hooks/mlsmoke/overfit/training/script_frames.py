"""The project's frames on a stack or in a traceback, named as a user reads them
(``train.py:120``): where a script built its optimizer, where it steps, where it
raised. A project file is one under the project root and outside any virtualenv."""

from __future__ import annotations

import traceback
from pathlib import Path
from types import FrameType


def construction_site(root: Path, frame: FrameType | None, frames: int = 2) -> str:
    """``model.py:71 in configure_optimizers, called by train.py:120``: the project's
    frames on the stack where an optimizer was built, innermost first."""
    places = []
    while frame is not None and len(places) < frames:
        filename = Path(frame.f_code.co_filename)
        if is_project_file(root, filename):
            relative = filename.resolve().relative_to(root.resolve())
            place = f"{relative}:{frame.f_lineno}"
            if frame.f_code.co_name != "<module>":
                place += f" in {frame.f_code.co_name}"
            places.append(place)
        frame = frame.f_back
    return ", called by ".join(places)


def is_project_file(root: Path, filename: Path) -> bool:
    if str(filename).startswith("<"):  # <string>, <frozen ...>: no file
        return False
    try:
        resolved = filename.resolve()
    except OSError:
        return False
    if not resolved.is_relative_to(root.resolve()):
        return False
    parts = resolved.relative_to(root.resolve()).parts
    return not any(part in ("site-packages", ".venv", "venv") for part in parts)


def innermost_project_line(root: Path, error: BaseException) -> str:
    """``train.py:12: exec(open("configurator.py").read())``: where in the project's
    files ``error`` was raised, innermost first; "" when no project frame is left."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        if is_project_file(root, Path(frame.filename)):
            relative = Path(frame.filename).resolve().relative_to(root.resolve())
            return f"{relative}:{frame.lineno}: {(frame.line or '').strip()}"
    return ""
