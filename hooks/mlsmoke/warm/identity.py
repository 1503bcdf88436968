"""Which worker a job may use, and where that worker listens.

A worker serves one project, one interpreter, one environment and one mlsmoke
installation: they make its key, and the key names its socket in a directory only this
user can enter. Variables that change from one commit to the next (pre-commit's, git's,
a run's token) stay out of the key; everything else may change what ``import torch``
did, so a change means another worker.
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
from mlsmoke.process_group import TOKEN_VARIABLE
from mlsmoke.warm.settings import ENV_DIRECTORY

_VOLATILE = re.compile(
    r"^(GIT_.*|PRE_COMMIT.*|_|PWD|OLDPWD|SHLVL|TERM.*|COLUMNS|LINES|"
    + re.escape(TOKEN_VARIABLE)
    + r")$"
)
_DEPENDENCY_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class WorkerIdentity:
    root: Path
    python: Path
    preload: tuple[str, ...]  # distributions to import, from [project].dependencies
    environment: Mapping[str, str]  # the worker's own, without the volatile variables

    @property
    def key(self) -> str:
        text = json.dumps(
            {
                "root": str(self.root),
                "python": [str(self.python), os.path.realpath(self.python)],
                "mlsmoke": [str(package_directory()), mlsmoke.__version__],
                "preload": list(self.preload),
                "environment": sorted(self.environment.items()),
            }
        )
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def worker_identity(
    root: Path, python: Path, dependencies: Sequence[str], environ: Mapping[str, str]
) -> WorkerIdentity:
    environment = {
        name: value for name, value in environ.items() if not _VOLATILE.match(name)
    }
    names = sorted({name for name in map(dependency_name, dependencies) if name})
    return WorkerIdentity(
        root, Path(os.path.abspath(python)), tuple(["torch", *names]), environment
    )


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
