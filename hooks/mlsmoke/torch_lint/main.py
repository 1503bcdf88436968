"""``mlsmoke torchfix [FILES...]``: TorchFix's findings in the files a commit touches.

A file that does not mention ``torch`` is not read further (TorchFix skips it too).
Given the project's pyproject.toml, the hook checks its ``[tool.mlsmoke.worker]``.
For the rest, flake8 with TorchFix runs under the project's flake8 configuration:
forked by the project's warm worker when it takes the job at once and its interpreter
has the hook's flake8 and TorchFix, else here, in the hook's environment (its
``additional_dependencies``). It never starts the worker, nor waits for it; under
pre-commit it first takes the result of its run ahead (``ahead/torchfix.py``), when
that run checked the very files it was given, as they are now. Exit code
1 when TorchFix found something, 2 when flake8 or TorchFix is missing here or the
worker's table is bad.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from mlsmoke.ahead import runs
from mlsmoke.ahead import torchfix as torchfix_ahead
from mlsmoke.arguments import files_after_dashes
from mlsmoke.project_root import find_project_root, is_project_config
from mlsmoke.errors import EnvironmentProblem, MlsmokeError
from mlsmoke.job_imports import TORCHFIX, TORCHFIX_JOB
from mlsmoke.process_end import how_it_ended
from mlsmoke.torch_lint import job
from mlsmoke.warm.launch import STARTUP_LIMIT
from mlsmoke.warm.settings import WorkerSettings, worker_settings

MARKER = b"torch"  # TorchFix's own filter: "torch" anywhere, functorch included
PATIENCE = STARTUP_LIMIT  # for the run ahead, which may wait for the worker's start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mlsmoke torchfix",
        description="TorchFix's checks (flake8's TOR codes) under the project's flake8"
        " configuration, in the warm worker when it is ready.",
    )
    parser.add_argument("filenames", nargs="*", metavar="FILE")
    args = parser.parse_args(
        files_after_dashes(sys.argv[1:] if argv is None else argv, options=())
    )
    root = find_project_root()
    settings = worker_settings(root, os.environ)  # given pyproject.toml, the check
    files = torch_files(args.filenames, root)
    if not files:
        return 0
    wanted = job.installed_versions()
    missing = [name for name in job.DISTRIBUTIONS if name not in wanted]
    if missing:
        raise EnvironmentProblem(
            f"mlsmoke torchfix: {' and '.join(missing)} not installed where the hook"
            " runs: list flake8 and torchfix in its additional_dependencies in"
            " .pre-commit-config.yaml"
        )
    keys = torchfix_ahead.keys_of(root, files, wanted)
    taken = runs.take(root, torchfix_ahead.HOOK_ID, args.filenames, keys, PATIENCE)
    if taken is not None:
        sys.stdout.write(taken.stdout)
        sys.stderr.write(taken.stderr)
        return taken.code
    code = None
    if settings.enabled:
        with open(os.devnull, "wb") as unused:
            sys.stdout.flush()
            code = in_worker(root, settings, files, wanted, sys.stdout.fileno(), unused)
    if code is not None and code < 0:  # a crash or a kill, in the worker's fork
        print(
            f"mlsmoke torchfix: its job in the warm worker {how_it_ended(code)};"
            " checking the files in this process instead",
            file=sys.stderr,
        )
    if code is None or code < 0 or code == job.UNAVAILABLE:
        code = job.check(files)
    return code


def torch_files(names: Sequence[str], root: Path) -> list[str]:
    """The files of ``names`` that TorchFix checks: those that mention torch, and
    not the project's pyproject.toml."""
    kept = [name for name in names if not is_project_config(name, root)]
    return [name for name in kept if _mentions_torch(name)]


def _mentions_torch(name: str) -> bool:
    try:
        return MARKER in Path(name).read_bytes()
    except OSError:  # flake8 says what is wrong with it
        return True


def in_worker(
    root: Path,
    settings: WorkerSettings,
    files: list[str],
    wanted: dict[str, str] | None,
    output: int,
    versions: IO[bytes],
    wait: bool = False,
) -> int | None:
    """The job's exit code in a worker (one that takes it at once, unless ``wait``),
    its findings written to the descriptor ``output`` and the versions it ran with to
    ``versions``; None without one. ``wanted``: the versions it must run with (None:
    any). No interpreter is started to find the worker: each candidate's socket is
    tried."""
    from mlsmoke.interpreter import configured_python, project_candidates
    from mlsmoke.warm.client import WorkerLost, start_job

    if root != Path.cwd().resolve():
        return None  # the files are named from here, flake8's config found from here
    try:
        candidates = project_candidates(root, configured_python(root, "overfit", None))
    except (OSError, MlsmokeError):  # the gate says what is wrong with its python
        return None
    args = [json.dumps(wanted), *files, str(versions.fileno())]
    for candidate in candidates:
        job_ = start_job(
            root, candidate.path, settings.idle, TORCHFIX_JOB, args, output,
            versions.fileno(), TORCHFIX, wait=wait,
        )  # fmt: skip
        if job_ is None:
            continue
        try:
            job_.wait_exited()
        except WorkerLost:
            return None
        return job_.end()[0]
    return None
