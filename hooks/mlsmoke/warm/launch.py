"""Start a worker process for the hook, and wait for its first word: ready, refused
(kept for an hour, so that the hooks do not try again at every commit), or taken: a
worker of the same key is there already (one whose starter went away while it
imported), and the hook waits for that one to listen instead."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlsmoke.project_command import module_command
from mlsmoke.process_group import TOKEN_VARIABLE
from mlsmoke.warm import claim
from mlsmoke.warm.identity import WorkerIdentity, socket_path

SERVER_MODULE = "mlsmoke.warm.server"
STARTUP_LIMIT = 120.0  # seconds for a new worker to import torch and the dependencies
REFUSAL_KEPT = 3600.0  # seconds before a refused worker is tried again
LISTEN_POLL = 0.05  # seconds between looks at a worker that holds the claim

_started: list[subprocess.Popen] = []  # workers this hook started, kept from __del__


def start_worker(
    directory: Path, identity: WorkerIdentity, idle: float, first_use: Sequence[str]
) -> bool:
    """Start the worker and wait until it listens; False when it refused or failed."""
    read_end, write_end = os.pipe()
    path = socket_path(directory, identity.key)
    command = module_command(
        identity.python,
        SERVER_MODULE,
        str(path),
        str(identity.root),
        repr(idle),
        str(write_end),
        json.dumps(list(identity.preload)),
        identity.code,
        json.dumps(list(first_use)),
        dies_with_caller=False,
    )
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
    try:
        with open(directory / f"{identity.key}.log", "wb") as log:
            process = subprocess.Popen(
                command,
                cwd=identity.root,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end,),
                start_new_session=True,
            )
    except OSError:
        os.close(read_end)
        return False
    finally:
        os.close(write_end)
    _started.append(process)
    answer = _first_line(read_end, STARTUP_LIMIT)
    if "ready" in answer:
        return True
    if "taken" in answer:
        process.wait()
        return _listens_soon(path, STARTUP_LIMIT)
    if "refused" in answer:
        (directory / f"{identity.key}.refused").write_text(answer["refused"] + "\n")
    else:
        process.kill()
    return False


def _listens_soon(path: Path, limit: float) -> bool:
    """Whether the worker holding the claim of the socket at ``path`` listens
    within ``limit`` seconds (False as soon as none holds it)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if listens(path):
            return True
        if not claim.held(claim.claim_path(path)):
            return listens(path)
        time.sleep(LISTEN_POLL)
    return False


def listens(path: Path) -> bool:
    """Whether a worker listens at the socket ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


def _first_line(fd: int, limit: float) -> dict[str, Any]:
    """The first JSON line written to ``fd`` within ``limit`` seconds ({} if none)."""
    data = b""
    deadline = time.monotonic() + limit
    with os.fdopen(fd, "rb", buffering=0) as stream:
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stream], [], [], left)[0]:
                return {}
            chunk = stream.read(4096)
            if not chunk:
                return {}
            data += chunk
    try:
        answer = json.loads(data.partition(b"\n")[0])
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def refused_lately(directory: Path, key: str) -> bool:
    try:
        age = time.time() - (directory / f"{key}.refused").stat().st_mtime
    except OSError:
        return False
    return age < REFUSAL_KEPT
