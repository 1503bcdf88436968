"""The torchfix hook's run ahead: flake8 with TorchFix, forked by the warm worker,
on the files this pre-commit run will give the hook.

Those files are guessed as pre-commit finds them (git's staged files, or every tracked
file under ``--all-files``) and filtered as the hook's manifest entry filters them
(``types_or: [python, toml]``: by extension only). The hook takes the result only when
it was given exactly these names, and each file it checks, flake8's config files and
the worker's flake8 and TorchFix versions are as they were.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from mlsmoke.ahead.invocation import Invocation, files_to_check
from mlsmoke.job_imports import TORCHFIX
from mlsmoke.ahead.runs import Outcome
from mlsmoke.cache_files import file_digest

FIRST_USE = TORCHFIX  # what the worker preloads for the job
HOOK_ID = "torchfix"
FLAKE8_CONFIGS = (".flake8", "setup.cfg", "tox.ini")  # where flake8 looks
_PROJECT_CONFIG = "pyproject.toml"


def plan(root: Path, run: Invocation) -> list[str] | None:
    """The file names pre-commit will give the hook; None when not known."""
    if root != Path.cwd().resolve():
        return None  # the hook's names are relative to the git root
    names = files_to_check(root, run)
    if names is None:
        return None
    return [name for name in names if name.endswith(".py") or name == _PROJECT_CONFIG]


def keys(root: Path, argv: list[str]) -> dict[str, str]:
    from mlsmoke.torch_lint.main import torch_files

    return keys_of(root, torch_files(argv, root), None)


def keys_of(
    root: Path, files: list[str], versions: dict[str, str] | None
) -> dict[str, str]:
    """The checked files' and flake8's configs' digests, and (given) the versions."""
    found = {
        "files": json.dumps({name: file_digest(root / name) for name in files}),
        "flake8 config": json.dumps(
            {name: file_digest(root / name) for name in FLAKE8_CONFIGS}
        ),
    }
    if versions is not None:
        found["versions"] = json.dumps(versions)
    return found


def job(root: Path, argv: list[str]) -> Outcome | None:
    """The check in the worker (waited for), with the versions it found; None
    without a worker or a file to check."""
    from mlsmoke.torch_lint.main import in_worker, torch_files
    from mlsmoke.warm.settings import worker_settings

    files = torch_files(argv, root)
    settings = worker_settings(root, os.environ)
    if not files or not settings.enabled:
        return None
    with (
        tempfile.TemporaryFile() as output,
        tempfile.TemporaryFile() as versions,
    ):
        code = in_worker(
            root, settings, files, None, output.fileno(), versions, wait=True
        )
        if code is None or code < 0:  # killed: its hook checks in its own process
            return None
        output.seek(0)
        versions.seek(0)
        found = json.loads(versions.read().decode())
        text = output.read().decode(errors="replace")
    return Outcome(text, "", code, {"versions": json.dumps(found)})
