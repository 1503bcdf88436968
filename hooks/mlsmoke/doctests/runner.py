"""``mlsmoke.doctests.runner.main([REQUEST, REPORT, FD])`` in the project interpreter.

Started by the hook through :func:`mlsmoke.project_command.module_command`. REQUEST is a
JSON file naming the files and how to run them (``Settings.runner_options``). Each
file's result is appended to the REPORT file as one JSON line when the file is done,
since the project's code may print anything on stdout. When FD is given, each file's
and each example's start, and each failure, goes there as a JSON line (``{"file"}``,
``{"file", "line", "source"}``, ``{"file", "failure"}``): the hook's clock, and what
was found in a file whose examples kill the interpreter.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mlsmoke.doctests.collecting_runner import RunOptions
from mlsmoke.doctests.execution import option_flags, run_files
from mlsmoke.doctests.results import ExampleFailure, FileResult, result_to_json


class Progress:
    """Tells the hook what runs, and appends each file's result to the report."""

    def __init__(self, report: str, fd: int | None) -> None:
        self.report = open(report, "a", encoding="utf-8")  # noqa: SIM115
        self.stream = os.fdopen(fd, "w", buffering=1) if fd is not None else None

    def file_started(self, shown: str) -> None:
        self._send({"file": shown})

    def example_started(self, shown: str, line: int, source: str) -> None:
        self._send({"file": shown, "line": line, "source": source})

    def example_failed(self, shown: str, failure: ExampleFailure) -> None:
        self._send({"file": shown, "failure": failure._asdict()})

    def file_done(self, result: FileResult) -> None:
        self.report.write(json.dumps(result_to_json(result)) + "\n")
        self.report.flush()

    def _send(self, event: dict) -> None:
        if self.stream is None:
            return
        try:
            self.stream.write(json.dumps(event) + "\n")
        except OSError:  # the hook stopped listening; the examples go on
            self.stream = None


def main(argv: list[str]) -> int:
    request_path, report_path = argv[:2]
    with open(request_path, encoding="utf-8") as file:
        request = json.load(file)
    files = [(shown, Path(path)) for shown, path in request["files"]]
    options = RunOptions(
        option_flags(request["optionflags"]),
        request.get("seed"),
        request.get("missing_dependency", "skip"),
    )
    progress = Progress(report_path, int(argv[2]) if len(argv) > 2 else None)
    run_files(files, Path(request["root"]), options, progress)
    progress.report.close()
    return 0
