"""``mlsmoke suites``' entry point inside the project's interpreter.

Run by the command through :func:`mlsmoke.overfit.process.spawn.spawn`, as the gate's
worker is: REQUEST RESULT FD. REQUEST is ``{"root", "settings": SuitesSettings,
"checkpoint", "checkpoint_key", "device"}``; RESULT gets ``{"evaluation": ...}`` or
``{"error": message}``; FD gets ``{"gate": "suites", "start": timeout}`` once the
project's code is about to run, then progress lines ``{"gate", "step", "of", "loss"}``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from mlsmoke.errors import EXIT_INTERRUPTED
from mlsmoke.overfit.process.worker import enter_project
from mlsmoke.suites.settings import SuitesSettings

PROGRESS_NAME = "suites"
PROGRESS_INTERVAL = 0.1


def main(argv: Sequence[str]) -> int:
    request_path, result_path, fd = argv[0], argv[1], int(argv[2])
    request = json.loads(Path(request_path).read_text())
    enter_project(Path(request["root"]))
    settings = SuitesSettings.from_json(request["settings"])
    try:
        from mlsmoke.suites.evaluation import evaluate
        from mlsmoke.suites.problem import SuitesProblem
        from mlsmoke.suites.project_objects import resolve

        with os.fdopen(fd, "w", buffering=1) as stream:
            _send(stream, {"gate": PROGRESS_NAME, "start": settings.timeout})
            try:
                objects = resolve(settings)
                evaluation = evaluate(
                    settings, objects, Path(request["checkpoint"]),
                    request["checkpoint_key"], request.get("device"),
                    _progress(stream),
                )  # fmt: skip
                answer: dict[str, Any] = {"evaluation": evaluation.to_json()}
            except SuitesProblem as problem:
                answer = {"error": problem.full_message()}
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    partial = Path(result_path + ".partial")
    partial.write_text(json.dumps(answer))
    os.replace(partial, result_path)
    return 0


def _progress(stream: IO[str]):
    last = [0.0]

    def sent(done: int, total: int, loss: float) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL or done == total:
            last[0] = now
            _send(stream, {"gate": PROGRESS_NAME, "step": done, "of": total,
                           "loss": loss})  # fmt: skip

    return sent


def _send(stream: IO[str], event: dict[str, Any]) -> None:
    try:
        stream.write(json.dumps(event) + "\n")
    except OSError:  # the command stopped reading; the evaluation goes on
        pass
