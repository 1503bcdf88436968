"""``mlsmoke worker start|status|stop``: the warm workers of this user.

``start`` starts the worker of the project in the working directory and returns at once
(``worker_start.py``: the ``warm-worker`` hook). ``status`` lists this user's workers,
those of the project in the working directory first (each with its pid, project,
interpreter, resident memory, jobs, idle time); ``stop`` stops them all, or with
``--project DIR`` the workers of that project only. A worker is this user's when the
process at the other end of its socket runs as this user (``SO_PEERCRED``). A socket
whose worker is gone is removed. Exit code 0; 2 for bad arguments or a bad
``[tool.mlsmoke.worker]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsmoke.project_root import find_project_root
from mlsmoke.errors import MlsmokeError
from mlsmoke.warm.settings import worker_settings
from mlsmoke.worker_start import start_in_background

if TYPE_CHECKING:
    import socket

ANSWER_SECONDS = 5.0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlsmoke worker", description=__doc__)
    parser.add_argument("action", choices=["start", "status", "stop"])
    parser.add_argument("--project", metavar="DIR", help="only this project's workers")
    parser.add_argument(
        "--no-ahead",
        "--no-gate",
        action="store_true",
        help="start: only the worker, not the hooks run ahead under pre-commit",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    project = Path(args.project).resolve() if args.project else None
    if args.action == "start":  # the warm-worker hook: the rest is for status and stop
        return start_in_background(project or find_project_root(), not args.no_ahead)
    from mlsmoke.warm.identity import runtime_directory

    directory = runtime_directory(os.environ)
    if directory is None:
        print("no worker: the worker directory is missing or not private")
        return 0
    here = project or _project_here()
    workers = in_order([w for w in _workers(directory) if _belongs(w, project)], here)
    if args.action == "stop":
        for path, answer in workers:
            _ask(path, {"op": "stop"})
            print(f"stopped worker {answer['pid']} of {answer['root']}")
        if not workers:
            print("no worker is running")
        return 0
    settings = worker_settings(project or Path.cwd(), os.environ)
    print("worker: " + ("on" if settings.enabled else f"off ({settings.why_off})"))
    for _, answer in workers:
        print(describe(answer))
    if not workers:
        print("no worker is running")
    return 0


def describe(answer: dict[str, Any]) -> str:
    """One worker, as ``status`` shows it."""
    from mlsmoke.warm.memory import describe_bytes

    age = time.time() - float(answer.get("started", time.time()))
    memory = describe_bytes(answer.get("resident"))
    lines = [
        f"worker {answer['pid']}: {answer['root']}",
        f"  python {answer['python']}, up {age:.0f} s, {answer['jobs_run']} job(s) run",
        f"  memory {memory} resident",
    ]
    if answer.get("running"):
        lines.append(f"  running {answer['running']} job(s)")
    else:
        lines.append(
            f"  idle {answer['idle_for']:.0f} s of {answer['idle_limit']:.0f} s"
        )
    if answer.get("importing"):
        lines.append("  importing what its jobs use on first use")
    if answer.get("retiring"):
        lines.append(f"  retiring: {answer['retiring']}")
    return "\n".join(lines)


def in_order(
    workers: list[tuple[Path, dict[str, Any]]], here: Path | None
) -> list[tuple[Path, dict[str, Any]]]:
    """The workers of project ``here`` first, then the others by project."""
    return sorted(workers, key=lambda w: (Path(w[1]["root"]) != here, w[1]["root"]))


def _project_here() -> Path | None:
    try:
        return find_project_root().resolve()
    except (OSError, MlsmokeError):
        return None


def _belongs(worker: tuple[Path, dict[str, Any]], project: Path | None) -> bool:
    return project is None or Path(worker[1]["root"]) == project


def _workers(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Each live worker of this user: its socket and status, with its resident
    memory; the sockets of dead ones removed."""
    from mlsmoke.warm.memory import process_resident_bytes

    found = []
    for path in sorted(directory.glob("*.sock")):
        answer = _ask(path, {"op": "status"})
        if answer is not None and answer.get("uid") != os.getuid():
            continue
        if answer is None:
            try:
                path.unlink()
            except OSError:
                pass
        elif "pid" in answer:
            answer["resident"] = process_resident_bytes(int(answer["pid"]))
            found.append((path, answer))
    return found


def _ask(path: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    import socket

    from mlsmoke.warm.protocol import Connection

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ANSWER_SECONDS)
    connection = Connection(sock)
    try:
        sock.connect(str(path))
        connection.send(request)
        answer = connection.receive()
        if answer is not None:
            answer["uid"] = peer_uid(sock)
        return answer
    except OSError:
        return None
    finally:
        connection.close()


def peer_uid(sock: socket.socket) -> int | None:
    """The user the process at the other end of ``sock`` runs as (Linux only)."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return os.getuid()  # elsewhere the directory's privacy is the only guard
    try:
        credentials = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    return int(struct.unpack("3i", credentials)[1])
