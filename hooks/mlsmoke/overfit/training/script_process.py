"""A training script as ``python SCRIPT ARGS`` would run it, in this process:
``sys.argv``, ``sys.path[0]``, the environment (the torchrun variables unset, so that
the script takes its one-process branch, unless it runs as one of ``torchrun``'s ranks)
and ``{out_dir}`` in its arguments, an empty directory removed afterwards. Its stderr
is kept too, to quote in messages. No torch here: the hook side reads these names."""

from __future__ import annotations

import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

# "{out_dir}" in args (and in globals' strings): a directory the gate provides
from mlsmoke.overfit.training.script_globals import OUT_DIR, OUT_DIR_VARIABLE

# One process, as `python train.py` runs: a script written for torchrun takes its
# distributed branch as soon as RANK is set.
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                      "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT")  # fmt: skip
STDERR_TAIL = 2000  # characters of the script's stderr kept for a message


@dataclass
class Script:
    """What ``script``, ``args`` and ``pin`` name, in the project at ``root``."""

    root: Path
    path: str
    args: list[str] = field(default_factory=list)
    pin: str | None = None
    ranks: int = 0  # run as one of torchrun's ranks: the launcher set its variables
    # values given to its module-level assignments, by name (script_globals.py)
    globals: dict[str, Any] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        return self.root / self.path

    @property
    def module_name(self) -> str:
        return Path(self.path).with_suffix("").as_posix().replace("/", ".")

    def command(self) -> str:
        runner = ["torchrun", f"--nproc-per-node={self.ranks}"] if self.ranks else []
        return " ".join([*(runner or ["python"]), self.path, *self.args])


@contextmanager
def as_a_process(script: Script) -> Iterator[io.StringIO]:
    """``sys.argv``, ``sys.path[0]``, the environment and stderr as ``python
    SCRIPT ARGS`` would have them; the script's stderr is also kept, for messages."""
    out_dir = tempfile.mkdtemp(prefix="mlsmoke-script-")
    args = [arg.replace(OUT_DIR, out_dir) for arg in script.args]
    saved_argv, saved_path, saved_stderr = sys.argv, list(sys.path), sys.stderr
    unset = () if script.ranks else TORCHRUN_VARIABLES
    saved_env = {name: os.environ.pop(name) for name in unset
                 if name in os.environ}  # fmt: skip
    tail = io.StringIO()
    sys.argv = [str(script.file), *args]
    sys.path.insert(0, str(script.file.parent))
    sys.stderr = _Tee(saved_stderr, tail)  # type: ignore[assignment]
    os.environ[OUT_DIR_VARIABLE] = out_dir
    try:
        yield tail
    finally:
        sys.argv, sys.path[:], sys.stderr = saved_argv, saved_path, saved_stderr
        os.environ.pop(OUT_DIR_VARIABLE, None)
        os.environ.update(saved_env)
        shutil.rmtree(out_dir, ignore_errors=True)


class _Tee(io.TextIOBase):
    def __init__(self, stream: TextIO, tail: io.StringIO) -> None:
        self.stream, self.tail = stream, tail

    def write(self, text: str) -> int:
        self.tail.write(text)
        if self.tail.tell() > 4 * STDERR_TAIL:
            kept = self.tail.getvalue()[-STDERR_TAIL:]
            self.tail.seek(0)
            self.tail.truncate()
            self.tail.write(kept)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")
