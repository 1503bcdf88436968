"""Scripts on disk: which to skip, reading only the part a decision needs, and atomic
rewrites that keep every other byte and the file mode."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from mlsmoke import atomic
from mlsmoke.strict_mode.shebang import (
    Dialect,
    dialect_of_shebang,
    dialect_without_shebang,
    split_shebang,
)

# Most scripts fit in one read; longer ones are read on while the decision needs it.
FIRST_READ = 16384
# Read by interactive or login shells, or by direnv: errexit there ends the session.
RC_NAMES = frozenset(
    {".profile", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases"}
    | {".zprofile", ".zshenv", ".zlogin", ".zlogout", "profile", "bash_profile"}
    | {"bashrc", "zshrc", "kshrc", "mkshrc", ".envrc"}
)


class BadPath(Exception):
    """A path that cannot be checked at all: missing, a directory, unreadable."""


@dataclass(frozen=True)
class Skipped:
    reason: str
    loud: bool = False  # bad input the user should hear about, not a policy


class Script:
    """An open script, read in growing chunks as the decision needs them."""

    def __init__(self, path: str, handle: BinaryIO, mode: int) -> None:
        self.path = path
        self.mode = mode
        self._handle = handle
        self.data = b""
        self.at_eof = False
        self.dialect = Dialect.SH
        self.body_start = 0

    def read_more(self) -> None:
        size = max(FIRST_READ, 3 * len(self.data))
        chunk = self._handle.read(size)
        self.data += chunk
        self.at_eof = len(chunk) < size

    def read_all(self) -> None:
        self.data += self._handle.read()
        self.at_eof = True

    def text(self) -> str:
        # surrogateescape keeps non-UTF-8 bytes (a Latin-1 comment) byte for byte.
        return self.data.decode("utf-8", "surrogateescape")

    def close(self) -> None:
        self._handle.close()


def open_script(path: str) -> Script | Skipped:
    """The script at ``path``, with its dialect; or why it is skipped.

    Raises :class:`BadPath` when the path cannot be checked at all.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise BadPath("no such file") from None
    except OSError as error:
        raise BadPath(f"cannot read: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        return Skipped("a symlink")
    if stat.S_ISDIR(info.st_mode):
        raise BadPath("is a directory, not a script")
    if not stat.S_ISREG(info.st_mode):
        return Skipped("not a regular file", loud=True)
    reason = name_skip_reason(path)
    if reason:
        return Skipped(reason)
    try:
        script = Script(path, open(path, "rb"), info.st_mode)
    except OSError as error:
        raise BadPath(f"cannot read: {error.strerror}") from None
    try:
        skipped = _read_shebang(script, executable=bool(info.st_mode & 0o111))
    except OSError as error:
        script.close()
        raise BadPath(f"cannot read: {error.strerror}") from None
    if skipped:
        script.close()
        return skipped
    return script


def name_skip_reason(path: str) -> str | None:
    name = os.path.basename(path)
    dot_rc = name.startswith(".") and name.endswith("rc")  # .bashrc, .zshrc, .inputrc
    if name in RC_NAMES or dot_rc or name.endswith(".bashrc"):
        return "an rc file, sourced by interactive shells"
    if name.endswith(".bats"):
        return "a bats test file"
    return None


def _read_shebang(script: Script, executable: bool) -> Skipped | None:
    script.read_more()
    if not script.data:
        return Skipped("empty file", loud=True)
    if b"\0" in script.data:
        return Skipped("binary file (it contains NUL bytes)", loud=True)
    while b"\n" not in script.data and not script.at_eof:
        script.read_more()
    words, script.body_start = split_shebang(script.text())
    if words is None:
        if not executable:
            return Skipped("no shebang and not executable: a sourced library")
        script.dialect = dialect_without_shebang(script.path)
        return None
    dialect, program = dialect_of_shebang(words)
    if dialect is None:
        return Skipped(f"not a shell script: its shebang runs {program or 'nothing'}")
    script.dialect = dialect
    return None


def write_atomically(path: str, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permission bits."""
    try:
        atomic.write_atomically(path, data, mode)
    except OSError as error:
        raise BadPath(f"cannot write: {error.strerror}") from None
