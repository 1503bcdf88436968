"""Today's failures of mlsmoke's own hooks, strict mode and doctest, found in-process
with the hooks' own code and their configuration minus the baseline."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from mlsmoke.adopt.tools import Failures
from mlsmoke.errors import EnvironmentProblem


def strict_mode(
    root: Path, files: Sequence[str], own_exclude: Sequence[str]
) -> Failures:
    from mlsmoke.strict_mode.files import BadPath, Skipped, open_script
    from mlsmoke.strict_mode.main import decide
    from mlsmoke.strict_mode.settings import is_excluded, load_settings

    policy = load_settings(root).policy
    failing: Failures = {}
    for path in files:
        if own_exclude and is_excluded(PurePosixPath(path), tuple(own_exclude)):
            continue
        try:
            opened = open_script(os.fspath(root / path))
        except BadPath:
            continue
        if isinstance(opened, Skipped):
            continue
        try:
            if not decide(opened, policy).passed:
                failing[path] = []
        finally:
            opened.close()
    return failing


def fix_scripts(root: Path, files: Sequence[str]) -> None:
    """Run the strict-mode fixer, which keeps every other byte, on ``files``."""
    if files:
        subprocess.run(
            [sys.executable, "-m", "mlsmoke", "strict-mode", "--fix", "--", *files],
            cwd=root,
            capture_output=True,
        )


def doctest(
    root: Path, files: Sequence[str], own_exclude: Sequence[str]
) -> tuple[Failures, str]:
    """Files whose examples fail today, and why, when the examples could not run."""
    from mlsmoke.doctests.main import files_with_examples
    from mlsmoke.doctests.project_run import run_where_dependencies_import
    from mlsmoke.doctests.settings import load_settings

    settings = load_settings(root)._replace(exclude=tuple(own_exclude))
    examples = files_with_examples([os.fspath(root / p) for p in files], root, settings)
    if not examples:
        return {}, ""
    shown = {
        os.fspath(file.path): file.path.relative_to(root).as_posix()
        for file in examples
    }
    try:
        results, _ = run_where_dependencies_import(examples, root, settings)
    except EnvironmentProblem as problem:
        return {path: [] for path in shown.values()}, str(problem)
    failing: Failures = {}
    for result in results:
        if result.failures or result.file_failure:
            path = shown.get(os.path.abspath(result.path), result.path)
            failing[path] = []
    return failing, ""
