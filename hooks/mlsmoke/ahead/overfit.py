"""The overfit-batch hook's run ahead: ``mlsmoke overfit`` with no arguments, the
gate training in the warm worker while the hooks before it run. Its keys are the
gates' cache keys (watched files, settings, interpreters)."""

from __future__ import annotations

from pathlib import Path

from mlsmoke.ahead.invocation import Invocation
from mlsmoke.job_imports import GATE
from mlsmoke.ahead.runs import Outcome, captured

FIRST_USE = GATE  # what the worker preloads for the job
HOOK_ID = "overfit-batch"


def plan(root: Path, run: Invocation) -> list[str] | None:
    return []  # pass_filenames: false


def keys(root: Path, argv: list[str]) -> dict[str, str]:
    from mlsmoke.overfit.process.main import default_keys

    return default_keys()


def job(root: Path, argv: list[str]) -> Outcome | None:
    from mlsmoke.overfit.process.main import main

    return captured("overfit", main, argv)
