"""Where a gate was when it was stopped: its phase, and the user's frames.

Read from stacks, not guessed: the worker's faulthandler dump at the timeout, or the
traceback of an exception. Standard library only; the hook side reads the dump.
"""

from __future__ import annotations

import linecache
import os
import re
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import mlsmoke

_PACKAGE = str(Path(mlsmoke.__file__).resolve().parent) + os.sep
# Library frames nobody edits: the standard library and torch.
_LIBRARY = re.compile(r"[/\\]lib[/\\]python3\.\d+[/\\](?!site-packages|dist-packages)"
                      r"|[/\\](site|dist)-packages[/\\]torch[/\\]")  # fmt: skip

# The phases, innermost first: the first of the gate's functions found on the stack,
# from the innermost frame out, names what the gate was doing.
MODEL, BATCH, IMPORT, TRAINING, SCRIPT, PROBING, STARTING = (
    "model", "batch", "import", "training", "script", "probing",
    "starting")  # fmt: skip
DOING = {
    IMPORT: "importing the factories' modules",
    MODEL: "building the model",
    BATCH: "building the batch",
    TRAINING: "training",
    SCRIPT: "running the training script",
    PROBING: "probing (re-training to diagnose the run)",
    STARTING: "starting the worker",
}
_MARKERS = (
    ("training/setup.py", "build_model", MODEL),
    ("training/adapters/plan.py", "_sample_model", MODEL),  # is it a LightningModule?
    ("training/setup.py", "build_batch", BATCH),
    ("overfit/gate.py", "load_callable", IMPORT),
    ("training/engine.py", "_train", TRAINING),
    ("training/script_run.py", "run_script", SCRIPT),
)


class Frame(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        text = f'  File "{self.file}", line {self.line}, in {self.function}'
        source = linecache.getline(self.file, self.line).strip()
        return f"{text}\n    {source}" if source else text


def phase_of(frames: Sequence[Frame]) -> str:
    """The gate's phase in ``frames`` (outermost first); ``training`` inside a probe
    is ``probing``, and a stack outside any gate is ``starting``."""
    probing = any(_is(frame, "overfit/verdict/") for frame in frames)
    for frame in reversed(frames):
        for suffix, function, phase in _MARKERS:
            if frame.function == function and _is(frame, suffix):
                return PROBING if probing and phase in (TRAINING, SCRIPT) else phase
    return PROBING if probing else STARTING


def user_frames(frames: Sequence[Frame]) -> list[Frame]:
    """The project's frames: not mlsmoke's, not the standard library's or torch's."""
    return [
        frame
        for frame in frames
        if not frame.file.startswith(("<", _PACKAGE))
        and not _LIBRARY.search(frame.file)
    ]


def _is(frame: Frame, suffix: str) -> bool:
    name = frame.file.replace(os.sep, "/")
    return name.startswith(_PACKAGE.replace(os.sep, "/")) and suffix in name


def traceback_frames(tb: TracebackType | None) -> list[Frame]:
    """The frames of a traceback, outermost first."""
    return [
        Frame(summary.filename, summary.lineno or 0, summary.name)
        for summary in traceback.extract_tb(tb)
    ]


_THREAD = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+")
_DUMP_FRAME = re.compile(
    r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<func>.*)$'
)


def main_thread_frames(dump: str, entry: str) -> list[Frame]:
    """From a faulthandler dump, the frames (outermost first) of the thread whose
    stack holds ``entry``, a path suffix of the worker's main module."""
    threads: list[list[Frame]] = []
    for line in dump.splitlines():
        if _THREAD.match(line):
            threads.append([])
            continue
        found = _DUMP_FRAME.match(line)
        if found and threads:
            file, number, function = found.group("file", "line", "func")
            threads[-1].append(Frame(file, int(number), function))
    for frames in threads:
        if any(frame.file.replace(os.sep, "/").endswith(entry) for frame in frames):
            return list(reversed(frames))  # faulthandler lists the innermost first
    return list(reversed(threads[-1])) if threads else []
