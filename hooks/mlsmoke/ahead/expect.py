"""The data-expectations hook's run ahead: ``mlsmoke expect`` with no arguments, the
batches read in the warm worker while the hooks before it run. Its keys are the pass
cache's (settings, suite, data files, interpreters) and every project file the gate
watches by default: the loaders may import any of them."""

from __future__ import annotations

from pathlib import Path

from mlsmoke.ahead.invocation import Invocation
from mlsmoke.job_imports import EXPECT
from mlsmoke.ahead.runs import Outcome, captured

FIRST_USE = EXPECT  # what the worker preloads for the job
HOOK_ID = "data-expectations"


def plan(root: Path, run: Invocation) -> list[str] | None:
    return []  # pass_filenames: false


def keys(root: Path, argv: list[str]) -> dict[str, str]:
    from mlsmoke.expect.main import default_keys

    return default_keys()


def job(root: Path, argv: list[str]) -> Outcome | None:
    from mlsmoke.expect.main import main

    return captured("expect", main, argv)
