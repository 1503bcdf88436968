"""Replace a file in one step: write a temporary file beside it, then rename it over.

Readers never see half a file, and two writers at once each rename a whole file of
their own (``mkstemp`` names are unique). Used by strict-mode's fixer, ``mlsmoke init``
and the gate's pass cache.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile


def write_atomically(
    path: str | os.PathLike[str],
    data: bytes,
    mode: int,
    prefix: str = ".mlsmoke-",
    suffix: str = ".tmp",
) -> None:
    """Replace ``path`` with ``data`` and permission bits ``mode``; OSError on failure,
    with the temporary file removed."""
    directory = os.path.dirname(os.fspath(path)) or "."
    descriptor, temporary = tempfile.mkstemp(
        dir=directory, prefix=prefix, suffix=suffix
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
