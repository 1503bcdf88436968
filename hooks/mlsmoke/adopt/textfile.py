"""Configuration files as text: read with their line endings, written atomically.

Editors work on ``\\n`` text; a file that used CRLF gets CRLF back, byte for byte
elsewhere. A command's files are written all or nothing: every target is checked
before the first write, and a write that fails anyway puts back the files written
before it.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mlsmoke.atomic import check_writable, write_atomically
from mlsmoke.errors import UsageError


@dataclass
class TextFile:
    """One file: what it held when read (``None``: absent) and what it should hold."""

    path: Path
    original: str | None
    newline: str = "\n"
    mode: int = 0o644
    text: str = field(default="")
    data: bytes | None = None  # the bytes read, to put back after a failed write

    @property
    def changed(self) -> bool:
        return self.text != (self.original or "")

    def diff(self, root: Path) -> str:
        name = self.path.relative_to(root).as_posix()
        before = "/dev/null" if self.original is None else f"a/{name}"
        lines = difflib.unified_diff(
            (self.original or "").splitlines(keepends=True),
            self.text.splitlines(keepends=True),
            before,
            f"b/{name}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(path: Path) -> TextFile:
    """``path`` as ``\\n`` text, remembering its line ending and mode."""
    try:
        data = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return TextFile(path, None)
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None
    text = data.decode("utf-8", "surrogateescape")
    newline = "\r\n" if "\r\n" in text else "\n"
    normalized = text.replace("\r\n", "\n")
    return TextFile(path, normalized, newline, mode, normalized, data)


def write_text(file: TextFile) -> None:
    """Write ``file.text`` atomically, in its original line endings and mode."""
    write_all([file])


def write_all(files: Sequence[TextFile]) -> None:
    """Write every changed file, or none: UsageError naming the file that failed."""
    changed = [file for file in files if file.changed]
    check_all_writable(changed)
    written: list[TextFile] = []
    for file in changed:
        try:
            write_atomically(file.path, _encoded(file), file.mode)
        except OSError as error:
            raise UsageError(
                f"{file.path}: cannot write: {error.strerror}; {_put_back(written)}"
            ) from None
        written.append(file)
    for file in changed:
        file.original = file.text
        file.data = _encoded(file)


def check_all_writable(files: Sequence[TextFile]) -> None:
    """UsageError naming the first file that could not be written now."""
    for file in files:
        try:
            check_writable(file.path)
        except OSError as error:
            raise UsageError(
                f"{file.path}: cannot write: {error.strerror}; nothing was written"
            ) from None


def _encoded(file: TextFile) -> bytes:
    return file.text.replace("\n", file.newline).encode("utf-8", "surrogateescape")


def _put_back(written: Sequence[TextFile]) -> str:
    """Restore the files already written (remove the new ones); say how that went."""
    stuck = []
    for file in reversed(written):
        try:
            if file.data is None:
                os.unlink(file.path)
            else:
                write_atomically(file.path, file.data, file.mode)
        except OSError as error:
            stuck.append(f"{file.path} ({error.strerror})")
    if stuck:
        return "these files were written and could not be restored: " + ", ".join(stuck)
    return "nothing was changed" if written else "nothing was written"


def with_final_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
