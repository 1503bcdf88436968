"""``mlsmoke torchfix [FILES...]``: TorchFix's findings in the files a commit touches.

A file that does not mention ``torch`` is not read further (TorchFix skips it too).
Given the project's pyproject.toml, the hook checks its ``[tool.mlsmoke.worker]``.
For the rest, flake8 with TorchFix runs under the project's flake8 configuration:
forked by the project's warm worker when it takes the job at once and its interpreter
has the hook's flake8 and TorchFix, else here, in the hook's environment (its
``additional_dependencies``). It never starts the worker, nor waits for it. Exit code
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

from mlsmoke.arguments import files_after_dashes
from mlsmoke.config import find_project_root, is_project_config
from mlsmoke.errors import EnvironmentProblem, MlsmokeError
from mlsmoke.job_imports import TORCHFIX, TORCHFIX_JOB
from mlsmoke.torch_lint import job
from mlsmoke.warm.settings import WorkerSettings, worker_settings

MARKER = b"torch"  # TorchFix's own filter: "torch" anywhere, functorch included


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
    names = [name for name in args.filenames if not is_project_config(name, root)]
    files = [name for name in names if _mentions_torch(name)]
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
    code = _in_worker(root, settings, files, wanted) if settings.enabled else None
    if code is None or code == job.UNAVAILABLE:
        code = job.check(files)
    return code


def _mentions_torch(name: str) -> bool:
    try:
        return MARKER in Path(name).read_bytes()
    except OSError:  # flake8 says what is wrong with it
        return True


def _in_worker(
    root: Path, settings: WorkerSettings, files: list[str], wanted: dict[str, str]
) -> int | None:
    """The job's exit code in a worker that took it at once; None without one. No
    interpreter is started to find the worker: each candidate's socket is tried."""
    from mlsmoke.interpreter import configured_python, project_candidates
    from mlsmoke.warm.client import WorkerLost, start_job

    if root != Path.cwd().resolve():
        return None  # the files are named from here, flake8's config found from here
    try:
        candidates = project_candidates(root, configured_python(root, "overfit", None))
    except (OSError, MlsmokeError):  # the gate says what is wrong with its python
        return None
    args = [json.dumps(wanted), *files]
    sys.stdout.flush()
    with open(os.devnull, "wb") as unused:
        for candidate in candidates:
            job_ = start_job(
                root, candidate.path, settings.idle, TORCHFIX_JOB,
                [*args, str(unused.fileno())], sys.stdout.fileno(), unused.fileno(),
                TORCHFIX, wait=False,
            )  # fmt: skip
            if job_ is None:
                continue
            try:
                job_.wait_exited()
            except WorkerLost:
                return None
            return job_.end()[0]
    return None
