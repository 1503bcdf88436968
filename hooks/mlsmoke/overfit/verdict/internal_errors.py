"""A diagnosis that raised from mlsmoke's own code: a bug in mlsmoke, not an answer.

The registry goes on to the next diagnosis whatever a diagnosis raised, so that a
project's ``sys.exit()`` in a probe, or its model failing on a probe's variant, cannot
hide the verdict. An error whose innermost frame is mlsmoke's own is told apart from
those: the run's notes (shown with ``-v``) name the diagnosis, the error and the line,
and with ``MLSMOKE_INTERNAL_ERRORS=raise`` (set by mlsmoke's own test suite) it is
raised, so that a diagnosis broken by a change fails its tests instead of answering
with the next one.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mlsmoke

PACKAGE = Path(mlsmoke.__file__).resolve().parent
VARIABLE = "MLSMOKE_INTERNAL_ERRORS"


# The errors of a program's own mistakes: a name, attribute, key or argument that is
# not there. A diagnosis's deliberate errors, and torch's, are of other kinds.
MISTAKES = (AttributeError, NameError, TypeError, KeyError, IndexError, ImportError)


def internal_error(error: BaseException) -> str | None:
    """``Type: message at mlsmoke/<file>:<line>`` when ``error`` is a mistake raised
    in mlsmoke's own code; None when it came from the project, a library or torch."""
    if not isinstance(error, MISTAKES):
        return None
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return None
    innermost = Path(frames[-1].filename).resolve()
    if not innermost.is_relative_to(PACKAGE):
        return None
    where = innermost.relative_to(PACKAGE.parent)
    return f"{type(error).__name__}: {error} at {where}:{frames[-1].lineno}"


def note_or_raise(
    diagnoser: Callable[..., Any], error: BaseException, notes: list[str]
) -> None:
    """Keep a note of an internal error (or raise it, under the variable)."""
    found = internal_error(error)
    if found is None:
        return
    if os.environ.get(VARIABLE) == "raise":
        raise error
    module = getattr(diagnoser, "__module__", "?").rpartition(".")[2]
    name = f"{module}.{getattr(diagnoser, '__qualname__', '?')}"
    notes.append(f"diagnosis {name} skipped, an error in mlsmoke: {found}")
