"""Which worker a job may use, and where that worker listens.

A worker serves one project root, one interpreter (its path and what the path leads
to) and one list of preloaded dependencies: they make its key, and the key names its
socket in a directory only this user can enter. It runs one mlsmoke code (its version
and a digest of its files, wherever they are installed): a job from other code retires
it and the job's hook starts the next at the same socket, so a changed mlsmoke never
leaves two workers for one project.

Nothing of the caller is in the key: ``git commit``, ``pre-commit run`` and the CLI in
one project share one worker. They used to get one each, because the key held the
caller's whole environment (git puts its exec-path first on PATH, pre-commit its hook
environment's ``bin`` and ``VIRTUAL_ENV``) and the directory mlsmoke was loaded from
(pre-commit's hook environment has a copy of its own). A job gets its caller's
environment at the fork anyway. Only the few variables that change what importing
torch and the dependencies loads (:data:`IMPORT_VARIABLES`), which neither git nor
pre-commit sets, are in the key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import mlsmoke
from mlsmoke.warm.code_digest import code_digest
from mlsmoke.warm.settings import ENV_DIRECTORY

IMPORT_VARIABLES = (
    "PYTHONPATH",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_VISIBLE_DEVICES",
)
_DEPENDENCY_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class WorkerIdentity:
    root: Path
    python: Path
    preload: tuple[str, ...]  # distributions to import, from [project].dependencies
    environment: Mapping[str, str]  # IMPORT_VARIABLES, those set
    code: str = ""  # mlsmoke's version and code digest

    @property
    def key(self) -> str:
        text = json.dumps(
            {
                "root": str(self.root),
                "python": [str(self.python), os.path.realpath(self.python)],
                "preload": list(self.preload),
                "environment": sorted(self.environment.items()),
            }
        )
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def worker_identity(
    root: Path,
    python: Path,
    dependencies: Sequence[str],
    environ: Mapping[str, str],
    code: str = "",
) -> WorkerIdentity:
    """The identity of the worker for these; ``code`` is :func:`mlsmoke_code`."""
    environment = {name: environ[name] for name in IMPORT_VARIABLES if name in environ}
    names = sorted({name for name in map(dependency_name, dependencies) if name})
    return WorkerIdentity(
        root, Path(os.path.abspath(python)), tuple(["torch", *names]), environment, code
    )


def mlsmoke_code(cache: Path | None) -> str:
    """This mlsmoke's version and the digest of its files."""
    return f"{mlsmoke.__version__}:{code_digest(package_directory(), cache)}"


def dependency_name(requirement: object) -> str:
    """The distribution a PEP 508 requirement names ('' for what is not one)."""
    if not isinstance(requirement, str):
        return ""
    match = _DEPENDENCY_NAME.match(requirement)
    return match.group(1) if match and ";" not in requirement else ""


def package_directory() -> Path:
    return Path(mlsmoke.__file__).resolve().parent


def runtime_directory(environ: Mapping[str, str]) -> Path | None:
    """This user's directory of workers, created private; None when it cannot be
    made or is not private (another user could then talk to the workers)."""
    chosen = environ.get(ENV_DIRECTORY)
    if chosen:
        directory = Path(chosen)
    elif environ.get("XDG_RUNTIME_DIR"):
        directory = Path(environ["XDG_RUNTIME_DIR"], "mlsmoke")
    else:
        directory = Path(tempfile.gettempdir(), f"mlsmoke-workers-{os.getuid()}")
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = directory.lstat()
    except OSError:
        return None
    private = stat.S_IMODE(status.st_mode) & 0o077 == 0
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid() or not private:
        return None
    return directory


def socket_path(directory: Path, key: str) -> Path:
    return directory / f"{key}.sock"


def info_path(directory: Path, key: str) -> Path:
    return directory / f"{key}.json"
