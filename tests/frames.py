"""Frames of mlsmoke's own code in a traceback, found by the package's directory.

Never by the word "mlsmoke": a checkout cloned into a directory named mlsmoke puts that
word in every path, the user's included.
"""

from __future__ import annotations

import re
from pathlib import Path

import mlsmoke

PACKAGE_DIR = Path(mlsmoke.__file__).resolve().parent
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+', re.MULTILINE)


def frame_paths(text: str) -> list[Path]:
    """The files of the frames of the tracebacks in ``text``."""
    return [Path(match["path"]) for match in _FRAME.finditer(text)]


def package_frames(text: str) -> list[Path]:
    """The frames of ``text`` in mlsmoke's own package directory."""
    return [
        path for path in frame_paths(text) if path.resolve().is_relative_to(PACKAGE_DIR)
    ]
