"""Replace a file in one step: write a temporary file beside it, then rename it over.

Readers never see half a file, and two writers at once each rename a whole file of
their own (``mkstemp`` names are unique). The new file keeps the old one's permission
bits, owner and group. Used by strict-mode's fixer, ``mlsmoke init`` and the gate's
pass cache.

One exception: a file with more than one hard link is written in place (see
:func:`_write_in_place`).
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
    try:
        before = os.stat(path)
    except FileNotFoundError:
        before = None
    if before is not None and before.st_nlink > 1:
        _write_in_place(path, data, mode)
        return
    directory = os.path.dirname(os.fspath(path)) or "."
    descriptor, temporary = tempfile.mkstemp(
        dir=directory, prefix=prefix, suffix=suffix
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if before is not None:  # before chmod: chown clears the set-id bits
            _keep_owner(temporary, before)
        os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _keep_owner(temporary: str, before: os.stat_result) -> None:
    """Give the new file the old one's owner and group, as far as we may.

    root may give a file to anyone; another user may only pick one of their own groups,
    so a refused owner still leaves the group to try, and a refused group the writer's.
    """
    for uid in (before.st_uid, -1):
        try:
            os.chown(temporary, uid, before.st_gid)
            return
        except PermissionError:
            continue


def _write_in_place(path: str | os.PathLike[str], data: bytes, mode: int) -> None:
    """Overwrite the file's own inode: every hard link to it sees the new content.

    A rename would give only this name the new text and leave the other names with the
    old one (a fixed script and its unfixed twin). The price: this is not atomic. A
    reader at the same moment, or a crash part way, can see the old bytes partly
    overwritten.
    """
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())
    if stat.S_IMODE(os.stat(path).st_mode) != stat.S_IMODE(mode):
        os.chmod(path, stat.S_IMODE(mode))


def check_writable(path: str | os.PathLike[str]) -> None:
    """OSError when :func:`write_atomically` could not write ``path`` now: its
    directory takes no new file, or the file itself refuses writing (read-only,
    immutable, append-only). Writes nothing."""
    directory = os.path.dirname(os.fspath(path)) or "."
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".mlsmoke-probe-")
    os.close(descriptor)
    os.unlink(temporary)
    if os.path.isfile(path):
        with open(path, "r+b"):
            pass
