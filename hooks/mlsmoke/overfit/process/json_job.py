"""One job in the project's interpreter, asked and answered in JSON files.

The request is written to a file, the job's module runs under ``spawn()`` (the
watchdog, signals passed on, the warm worker where there is one), and its answer is
read back as plain values. Every command that runs project code this way (the gate,
``expect``, ``suites``, ``profile``) goes through here, so none of them imports torch.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlsmoke.overfit.process.deaths import WorkerEnd
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.job_imports import GATE, GATE_JOB
from mlsmoke.overfit.process.spawn import ProgressLine, spawn
from mlsmoke.overfit.verdict.report import progress_line
from mlsmoke import process_end
from mlsmoke.project_process import WorkerUse
from mlsmoke.scratch import scratch_directory


def run_json_job(
    owner: str,
    root: Path,
    python: Path,
    request: dict[str, Any],
    module: str = GATE_JOB,
    warm: WorkerUse = WorkerUse.NONE,
    first_use: Sequence[str] = GATE,
    gates: Sequence[GateSettings] = (),
    line: ProgressLine = progress_line,
    verbose: bool = False,
) -> tuple[Any, WorkerEnd]:
    """``module``'s answer to ``request`` (None when it ended without one), and how
    it ended, with its output and stack dump.

    The job gets the request file, the answer file and a progress pipe; the request
    also names a ``stack`` file for the job's own dump at its timeout. Its output is
    echoed with ``verbose``. ``first_use``: what such jobs import first, for the
    warm worker to import while idle. Ctrl-C in the job is Ctrl-C here. ``owner`` (the
    command's name) names the temporary directory.
    """
    with scratch_directory(owner) as scratch:
        request_file = Path(scratch, "request.json")
        answer_file = Path(scratch, "result.json")
        stack_file = Path(scratch, "stack.txt")
        request_file.write_text(json.dumps({**request, "stack": str(stack_file)}))
        output = Path(scratch, "output.txt")
        args = [str(request_file), str(answer_file)]
        end = spawn(
            root, python, list(gates), args, output, module, warm, first_use, line
        )
        end.output = output.read_text(errors="replace")
        end.stack = (
            stack_file.read_text(errors="replace") if stack_file.exists() else ""
        )
        if verbose and end.output:
            sys.stderr.write(end.output)
        if end.code == 130:
            raise KeyboardInterrupt
        try:
            return json.loads(answer_file.read_text()), end
        except (OSError, ValueError):
            return None, end


def how_it_ended(end: WorkerEnd) -> str:
    """``"was killed by SIGSEGV (a segmentation fault)"`` or ``"exited with code
    1"``: a job that ended without its answer and was not stopped by the watchdog."""
    return process_end.how_it_ended(end.code)


def output_tail(end: WorkerEnd, lines: int) -> str:
    """The last ``lines`` lines of the job's output."""
    return "\n".join(end.output.rstrip().splitlines()[-lines:])
