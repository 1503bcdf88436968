"""The evaluation, run in the project's interpreter as the gate runs: the same
interpreter search, the same supervised process (``overfit/process/spawn.py``:
watchdog, signals passed on, the warm worker when there is one), and the result read
back as plain values. This side never imports torch."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mlsmoke.errors import EnvironmentProblem
from mlsmoke.interpreter import (
    configured_python,
    first_that_imports,
    project_candidates,
)
from mlsmoke.overfit.process.deaths import WorkerEnd
from mlsmoke.overfit.process.spawn import spawn
from mlsmoke.project_process import WorkerUse, warm_then_cold
from mlsmoke.scratch import scratch_directory
from mlsmoke.suites.problem import SuitesProblem
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import SuitesSettings

WORKER = "mlsmoke.suites.worker"
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
    with scratch_directory("suites") as scratch:
        request_file, answer = Path(scratch, "request.json"), Path(
            scratch, "result.json"
        )
        request_file.write_text(json.dumps(request))
        output = Path(scratch, "output.txt")
        end = spawn(root, python, [], [str(request_file), str(answer)], output,
                    module=WORKER, warm=warm, line=progress_line)  # fmt: skip
        printed = output.read_text(errors="replace")
        if verbose and printed:
            sys.stderr.write(printed)
        if end.code == 130:
            raise KeyboardInterrupt
        try:
            data = json.loads(answer.read_text())
        except (OSError, ValueError):
            raise EnvironmentProblem(_ended_early(python, end, printed)) from None
    if "error" in data:
        raise SuitesProblem(data["error"])
    return Evaluation.from_json(data["evaluation"])


def progress_line(name: str, done: int, total: int, loss: float, rate: float) -> str:
    return f"suites: evaluated {done}/{total} examples  mean loss {loss:.4g}"


def _ended_early(python: Path, end: WorkerEnd, printed: str) -> str:
    if end.timed_out_after is not None:
        how = (
            f"was stopped at the timeout ({end.timed_out_after:g} s,"
            " tool.mlsmoke.suites.timeout)"
        )
    elif end.code < 0:
        how = f"was killed by signal {-end.code}"
    else:
        how = f"exited with code {end.code}"
    tail = "\n".join(printed.rstrip().splitlines()[-TAIL_LINES:])
    return f"{python} {how} before the evaluation finished" + (
        f"; its last output:\n{tail}" if tail else ""
    )
