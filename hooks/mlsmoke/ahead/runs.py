"""A hook's run ahead: started by the warm-worker hook at the start of a commit, it
runs while black, flake8 and the other hooks run; the hook of the same commit then
takes its result instead of running again.

Only under pre-commit (``PRE_COMMIT=1``), and only for the same pre-commit run: the
hooks of one run are children of one pre-commit process, so its pid and start time
name the run. Each hook's job (a module of this package, see ``jobs.py``) runs in the
detached process the warm-worker hook leaves behind. It holds
``.mlsmoke/ahead/<hook>.lock`` from before that hook returns until its result is
written to ``<hook>.json``: the run's id, the arguments the hook will be given, the
job's keys (every input it read: files, settings, interpreters), its output and its
exit code. Nothing is written when a key changed while it ran (a fixer hook rewrote a
file). The hook waits for the lock, takes the result (removing it: a result is taken
once) and uses it only when the run, the arguments and every key are its own;
otherwise it runs as it would have.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, NamedTuple

from mlsmoke.cache_files import CACHE_DIR, CacheDirectory, write_text_atomically
from mlsmoke.errors import MlsmokeError

DIRECTORY = "ahead"
SKIP_VARIABLE = "SKIP"  # pre-commit's list of hook ids not to run
POLL_SECONDS = 0.01  # while the run ahead still runs

_running_ahead = False  # this process is the run ahead: it takes no result


class Taken(NamedTuple):
    stdout: str
    stderr: str
    code: int


class Outcome(NamedTuple):
    """A job's run ahead: what it printed and returned, and what it learned while
    running that the hook must also hold (``facts``, added to the keys)."""

    stdout: str
    stderr: str
    code: int
    facts: dict[str, str]


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


def skipped(hook_id: str) -> bool:
    """Whether pre-commit's ``SKIP`` names ``hook_id``."""
    return hook_id in os.environ.get(SKIP_VARIABLE, "").replace(" ", "").split(",")


def hold(root: Path, hook_id: str) -> int | None:
    """The lock's descriptor, held, for the process that will run ahead; None when the
    lock cannot be made or another run ahead holds it."""
    directory = CacheDirectory(root, DIRECTORY)
    try:
        directory.prepare()
        fd = os.open(_lock_path(root, hook_id), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, pre_commit_run().encode())
        _result_path(root, hook_id).unlink(missing_ok=True)
    except OSError:
        os.close(fd)
        return None
    return fd


def release(lock: int) -> None:
    """Release a held lock with no result: its hook runs as it would have."""
    os.close(lock)


def captured(
    command: str, main: Callable[[list[str]], int], argv: list[str]
) -> Outcome:
    """``mlsmoke command argv`` in this process, its output kept; an error of the
    user's (the project's loader raised) is said as the command line says it."""
    from mlsmoke.cli import prefixed

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except MlsmokeError as error:
            print(prefixed(f"mlsmoke {command}", str(error)), file=sys.stderr)
            code = error.exit_code
    return Outcome(stdout.getvalue(), stderr.getvalue(), code, {})


def run(
    root: Path,
    hook_id: str,
    lock: int,
    argv: list[str],
    job: Callable[[], Outcome | None],
    keys: Callable[[], dict[str, str]],
) -> None:
    """Run ``job`` and write its result if its keys held; release the lock."""
    global _running_ahead
    _running_ahead = True
    run_id = _run_id_of(lock)
    try:
        started = time.time()
        before = keys()
        outcome = job()
        if outcome is None or keys() != before:
            return
        result = {
            "run": run_id,
            "argv": argv,
            "keys": {**before, **outcome.facts},
            "stdout": outcome.stdout,
            "stderr": outcome.stderr,
            "code": outcome.code,
            "ran": [started, time.time()],
        }
        write_text_atomically(_result_path(root, hook_id), json.dumps(result))
    except Exception:  # the hook runs as it would have
        return
    finally:
        os.close(lock)


def take(
    root: Path,
    hook_id: str,
    argv: Sequence[str],
    keys: dict[str, str],
    patience: float,
) -> Taken | None:
    """The run ahead's result, if it ran for this run, these arguments and keys;
    waits up to ``patience`` seconds while a run ahead still holds the lock."""
    run_id = pre_commit_run()
    if not run_id or _running_ahead:
        return None
    asked = time.time()
    try:
        with open(_lock_path(root, hook_id), "rb") as held:
            if held.read().decode(errors="replace") != run_id:
                return None  # no run ahead, or one of another commit's
            if not _wait_for(held, patience):
                return None
        result_path = _result_path(root, hook_id)
        taken = result_path.with_suffix(f".taken-{os.getpid()}")
        os.rename(result_path, taken)
        result = json.loads(taken.read_text())
        taken.unlink()
    except (OSError, ValueError):
        return None
    try:
        own = (result["run"], result["argv"], result["keys"]) == (
            run_id,
            list(argv),
            keys,
        )
        _write_timing(root, hook_id, result.get("ran"), asked, own)
        if not own:
            return None
        return Taken(str(result["stdout"]), str(result["stderr"]), int(result["code"]))
    except (KeyError, TypeError, ValueError):
        return None


def _write_timing(
    root: Path, hook_id: str, ran: object, asked: float, used: bool
) -> None:
    """When the run ahead ran, when its hook asked for it and had it: what
    ``benchmarks/bench_commit_paths.py`` reports (``<hook>.timing``)."""
    timing = {"ran": ran, "asked": asked, "taken": time.time(), "used": used}
    try:
        write_text_atomically(
            _result_path(root, hook_id).with_suffix(".timing"), json.dumps(timing)
        )
    except OSError:
        pass


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


def _lock_path(root: Path, hook_id: str) -> Path:
    return root / CACHE_DIR / DIRECTORY / f"{hook_id}.lock"


def _result_path(root: Path, hook_id: str) -> Path:
    return root / CACHE_DIR / DIRECTORY / f"{hook_id}.json"
