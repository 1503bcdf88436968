"""The gate run ahead: started by the warm-worker hook at the start of a commit, it
trains while black, flake8 and the other hooks run; the overfit-batch hook of the same
commit then takes its result instead of training again.

Only under pre-commit (``PRE_COMMIT=1``), and only for the same pre-commit run: the
hooks of one run are children of one pre-commit process, so its pid and start time
name the run. The run ahead is ``mlsmoke overfit`` with no arguments, in the detached
process the warm-worker hook leaves behind. It holds ``.mlsmoke/ahead/overfit.lock``
from before that hook returns until its result is written to ``overfit.json``: the
run's id, its arguments, the cache keys of its gates (their watched files, settings and
interpreters), its output and its exit code. Nothing is written when a key changed
while it ran (a fixer hook rewrote a file). The overfit-batch hook waits for the lock,
takes the result (removing it: a result is taken once) and uses it only when the run,
the arguments and every key are its own; otherwise it trains as it would have. Its
passes reach the pass cache as any run's do; a failure is never kept past its run.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, NamedTuple

from mlsmoke.cache_files import CACHE_DIR, CacheDirectory, write_text_atomically

DIRECTORY = "ahead"
SKIP_VARIABLE = "SKIP"  # pre-commit's list of hook ids not to run
HOOK_ID = "overfit-batch"
POLL_SECONDS = 0.01  # while the run ahead still trains

_running_ahead = False  # this process is the run ahead: it takes no result


class Taken(NamedTuple):
    stdout: str
    stderr: str
    code: int


def pre_commit_run() -> str:
    """The pre-commit run this process is a hook of: its pid and start time; '' when
    not run by pre-commit."""
    if os.environ.get("PRE_COMMIT") != "1":
        return ""
    parent = os.getppid()
    try:
        stat = Path(f"/proc/{parent}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()
    return f"{parent}:{fields[19]}" if len(fields) > 19 else ""


def wanted() -> bool:
    """Whether this commit's overfit-batch hook will want a run ahead."""
    skipped = os.environ.get(SKIP_VARIABLE, "").replace(" ", "").split(",")
    return bool(pre_commit_run()) and HOOK_ID not in skipped


def hold(root: Path) -> int | None:
    """The lock's descriptor, held, for the process that will run ahead; None when the
    lock cannot be made or another run ahead holds it."""
    directory = CacheDirectory(root, DIRECTORY)
    try:
        directory.prepare()
        fd = os.open(
            directory.directory / "overfit.lock", os.O_RDWR | os.O_CREAT, 0o600
        )
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, pre_commit_run().encode())
        _result_path(root).unlink(missing_ok=True)
    except OSError:
        os.close(fd)
        return None
    return fd


def run(
    root: Path,
    lock: int,
    gate: Callable[[list[str]], int],
    keys: Callable[[], dict[str, str]],
) -> None:
    """Run ``gate([])`` with its output kept, and write its result if its keys held."""
    global _running_ahead
    _running_ahead = True
    run_id = _run_id_of(lock)
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        before = keys()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = gate([])
        if keys() != before:
            return
        result = {
            "run": run_id,
            "argv": [],
            "keys": before,
            "stdout": stdout.getvalue(),
            "stderr": stderr.getvalue(),
            "code": code,
        }
        write_text_atomically(_result_path(root), json.dumps(result))
    except Exception:  # the hook trains as it would have
        return
    finally:
        os.close(lock)


def take(
    root: Path, argv: Sequence[str], keys: dict[str, str], patience: float
) -> Taken | None:
    """The run ahead's result, if it ran for this run, these arguments and keys;
    waits up to ``patience`` seconds while a run ahead still holds the lock."""
    run_id = pre_commit_run()
    if not run_id or _running_ahead:
        return None
    try:
        with open(root / CACHE_DIR / DIRECTORY / "overfit.lock", "rb") as held:
            if held.read().decode(errors="replace") != run_id:
                return None  # no run ahead, or one of another commit's
            if not _wait_for(held, patience):
                return None
        taken = _result_path(root).with_suffix(f".taken-{os.getpid()}")
        os.rename(_result_path(root), taken)
        result = json.loads(taken.read_text())
        taken.unlink()
    except (OSError, ValueError):
        return None
    try:
        if (result["run"], result["argv"], result["keys"]) != (
            run_id,
            list(argv),
            keys,
        ):
            return None
        return Taken(str(result["stdout"]), str(result["stderr"]), int(result["code"]))
    except (KeyError, TypeError, ValueError):
        return None


def _wait_for(lock: IO[bytes], patience: float) -> bool:
    """Whether the run ahead released ``lock`` within ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)


def _run_id_of(lock: int) -> str:
    """The run the lock was taken for: this process's parent is gone by now."""
    os.lseek(lock, 0, os.SEEK_SET)
    return os.read(lock, 4096).decode(errors="replace")


def _result_path(root: Path) -> Path:
    return root / CACHE_DIR / DIRECTORY / "overfit.json"
