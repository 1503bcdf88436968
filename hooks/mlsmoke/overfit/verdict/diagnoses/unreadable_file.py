"""A factory could not read a file: the data, a vocabulary or a checkpoint is missing
or unreadable.

The evidence is the error's type, not its words: an OSError (FileNotFoundError,
PermissionError, IsADirectoryError, ...) raised while the model or the batch was built
(in script mode, while the script fetched a batch the gate pins), or a library's plain
OSError ("Can't load tokenizer for ..."). The verdict names the path the error names
and the working directory the factory ran in, where a relative path was looked for.
The code stays the phase's: ``data-error`` for the batch, ``train-error`` for the
model factory.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import TRAIN_ERROR, Diagnosis

DATA_ERROR = "data-error"
# The factories, and the code a file they cannot read is reported under.
FACTORIES = {
    "batch": ("building the batch", DATA_ERROR),
    "model": ("building the model", TRAIN_ERROR),
}
FILE_ERRORS = (
    FileNotFoundError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
)

PORTABLE_PATHS = (
    "build the path from the module's own directory (Path(__file__).parent /"
    " 'data' / ...), not from the working directory: pre-commit, CI and the gate run"
    " from the project root"
)
ABSENT_IN_A_CLONE = (
    "a file git does not track (downloaded or generated data, a checkpoint) is absent"
    " in a fresh clone and in CI: commit a small sample for the gate, or make the batch"
    " in code"
)
SCRIPT_SETTINGS = (
    "the script's settings choose its data: name data that exists with `args` or"
    " `globals` in [tool.mlsmoke.overfit], or prepare the data before the gate runs"
)
ABSOLUTE = (
    "an absolute path names one machine's file: make it relative to the module's own"
    " directory"
)
_FIXES = {
    PermissionError: "make the file readable by the user the hooks run as",
    IsADirectoryError: "name a file in that directory, not the directory",
    NotADirectoryError: "a part of the path is a file, not a directory: check it",
}


class UnreadableFile(NamedTuple):
    """The file an error could not read: its path as the error names it (None when
    the error names none), why, and where a relative path pointed."""

    path: str | None
    reason: str
    looked_for: str | None


def unreadable_file(
    error: BaseException | None, working_directory: str | None
) -> UnreadableFile | None:
    """What file ``error`` could not read, or None when it is no file's error (a
    ConnectionError or a TimeoutError is an OSError too).

    >>> error = FileNotFoundError(2, "No such file or directory", "data/train.txt")
    >>> unreadable_file(error, "/home/me/proj").looked_for
    '/home/me/proj/data/train.txt'
    >>> unreadable_file(ConnectionError("refused"), "/home/me/proj") is None
    True
    """
    if not isinstance(error, OSError):
        return None
    path = _path(error.filename)
    if path is None and not (isinstance(error, FILE_ERRORS) or type(error) is OSError):
        return None
    reason = error.strerror or (str(error).strip().splitlines() or [""])[0]
    looked_for = None
    if path is not None and working_directory and not os.path.isabs(path):
        looked_for = os.path.normpath(os.path.join(working_directory, path))
    return UnreadableFile(path, reason, looked_for)


def _path(filename: object) -> str | None:
    if isinstance(filename, bytes):
        return os.fsdecode(filename)
    if filename is None:
        return None
    return os.fspath(filename) if isinstance(filename, (str, os.PathLike)) else None


@diagnoser(DATA_ERROR)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if evidence.phase not in FACTORIES or evidence.cuda_error is not None:
        return None
    found = unreadable_file(evidence.error, evidence.working_directory)
    if found is None:
        return None
    doing, code = FACTORIES[evidence.phase]
    if evidence.script is not None and evidence.phase == "batch":
        doing = "fetching the script's batch"
    name = type(evidence.error).__name__
    if found.path is None:
        summary = f"{doing} raised {name}: a file it reads is missing or unreadable"
    else:
        summary = f"{doing} could not read {found.path}: {found.reason} ({name})"
    return Diagnosis(
        code, summary, evidence_lines(evidence, found), suggestions(evidence, found)
    )


def evidence_lines(evidence: Evidence, found: UnreadableFile) -> list[str]:
    raised = _errors.raised(evidence)
    if evidence.script is None:
        factory = "batch" if evidence.phase == "batch" else "model"
        ran, lines = "the factory", [f"the {factory} factory raised {raised}"]
    else:
        ran = evidence.script
        lines = [f"fetching a batch, {ran} raised {raised}"]
    where = evidence.working_directory
    if found.looked_for is not None:
        lines.append(
            f"{found.path} is relative to the working directory {ran} ran in,"
            f" {where}: it was looked for as {found.looked_for}"
        )
    elif where is not None:
        lines.append(f"{ran} ran in {where}, where relative paths are looked for")
    if evidence.user_traceback:
        lines.append(evidence.user_traceback)
    return lines


def suggestions(evidence: Evidence, found: UnreadableFile) -> list[str]:
    fix = _FIXES.get(type(evidence.error))  # type: ignore[arg-type]
    if fix is not None:
        return [fix, ABSENT_IN_A_CLONE]
    if found.path is not None and os.path.isabs(found.path):
        return [ABSENT_IN_A_CLONE, ABSOLUTE]
    if evidence.script is not None:
        return [SCRIPT_SETTINGS, ABSENT_IN_A_CLONE]
    return [PORTABLE_PATHS, ABSENT_IN_A_CLONE]
