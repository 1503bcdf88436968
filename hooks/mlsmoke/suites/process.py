"""The evaluation, run in the project's interpreter as the gate runs: the same
interpreter search, the same supervised process (``overfit/process/spawn.py``:
watchdog, signals passed on, the warm worker when there is one), and the result read
back as plain values. This side never imports torch."""

from __future__ import annotations

from pathlib import Path

from mlsmoke.errors import EnvironmentProblem
from mlsmoke.job_imports import SUITES, SUITES_JOB
from mlsmoke.interpreter import (
    configured_python,
    first_that_imports,
    project_candidates,
)
from mlsmoke.overfit.process.deaths import WorkerEnd
from mlsmoke.overfit.process.json_job import how_it_ended, output_tail, run_json_job
from mlsmoke.project_process import WorkerUse, warm_then_cold
from mlsmoke.suites.problem import SuitesProblem
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings

TAIL_LINES = 30


def evaluate_in_project(
    root: Path,
    settings: SuitesSettings,
    checkpoint: Path,
    checkpoint_key: str,
    device: str | None,
    verbose: bool = False,
) -> Evaluation:
    configured = configured_python(root, "suites", settings.python)
    python = first_that_imports(project_candidates(root, configured), ["torch"])
    request = {
        "root": str(root),
        "settings": settings.to_json(),
        "checkpoint": str(checkpoint),
        "checkpoint_key": checkpoint_key,
        "device": device,
    }
    return warm_then_cold(lambda warm: _run(root, python.path, request, verbose, warm))


def _run(
    root: Path, python: Path, request: dict, verbose: bool, warm: WorkerUse
) -> Evaluation:
    answer, end = run_json_job(
        "suites",
        root,
        python,
        request,
        SUITES_JOB,
        warm,
        SUITES,
        line=progress_line,
        verbose=verbose,
    )
    if answer is None:
        raise EnvironmentProblem(_ended_early(python, end))
    if "error" in answer:
        raise SuitesProblem(answer["error"])
    return Evaluation.from_json(answer["evaluation"])


def progress_line(name: str, done: int, total: int, loss: float, rate: float) -> str:
    return f"suites: evaluated {done}/{total} examples  mean loss {loss:.4g}"


def _ended_early(python: Path, end: WorkerEnd) -> str:
    if end.timed_out_after is not None:
        how = (
            f"was stopped at the timeout ({end.timed_out_after:g} s,"
            " tool.mlsmoke.suites.timeout)"
        )
    else:
        how = how_it_ended(end)
    tail = output_tail(end, TAIL_LINES)
    return f"{python} {how} before the evaluation finished" + (
        f"; its last output:\n{tail}" if tail else ""
    )
