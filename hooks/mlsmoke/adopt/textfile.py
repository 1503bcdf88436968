"""Configuration files as text: read with their line endings, written atomically.

Editors work on ``\\n`` text; a file that used CRLF gets CRLF back, byte for byte
elsewhere.
"""

from __future__ import annotations

import difflib
import stat
from dataclasses import dataclass, field
from pathlib import Path

from mlsmoke.atomic import write_atomically
from mlsmoke.errors import UsageError


@dataclass
class TextFile:
    """One file: what it held when read (``None``: absent) and what it should hold."""

    path: Path
    original: str | None
    newline: str = "\n"
    mode: int = 0o644
    text: str = field(default="")

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
    return TextFile(path, normalized, newline, mode, normalized)


def write_text(file: TextFile) -> None:
    """Write ``file.text`` atomically, in its original line endings and mode."""
    data = file.text.replace("\n", file.newline).encode("utf-8", "surrogateescape")
    try:
        write_atomically(file.path, data, file.mode)
    except OSError as error:
        raise UsageError(f"{file.path}: cannot write: {error.strerror}") from None
    file.original = file.text


def with_final_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
