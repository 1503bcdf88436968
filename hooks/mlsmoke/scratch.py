"""The hooks' temporary directories, named by their owner so that a later run can
remove those of a run that was killed (SIGKILL leaves no chance to clean up)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile

_STALE = re.compile(r"^mlsmoke-[a-z]+-(?P<host>.+)-(?P<pid>\d+)-[^-]+$")


def scratch_directory(hook: str) -> tempfile.TemporaryDirectory:
    """A TemporaryDirectory ``mlsmoke-<hook>-<host>-<pid>-XXXX``, after removing
    those of this host's dead processes."""
    remove_stale()
    host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
    return tempfile.TemporaryDirectory(prefix=f"mlsmoke-{hook}-{host}-{os.getpid()}-")


def remove_stale() -> None:
    host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return
    for entry in entries:
        found = _STALE.match(entry.name) if entry.name.startswith("mlsmoke-") else None
        if found is None or found.group("host") != host:
            continue
        if _alive(int(found.group("pid"))):
            continue
        try:
            if (
                entry.is_dir(follow_symlinks=False)
                and entry.stat().st_uid == os.getuid()
            ):
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's: alive
        return True
    return True
