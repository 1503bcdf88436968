"""``mlsmoke.doctests.runner.main([REQUEST, REPORT, FD])`` in the project interpreter.

Started by the hook through :func:`mlsmoke.interpreter.module_command`. REQUEST is a
JSON file naming the files and the option flags. The results go to the REPORT file as
JSON, rewritten after each file, since the project's code may print anything on stdout.
When FD is given, each file's and each example's start goes there as a JSON line
(``{"file"}``, ``{"file", "line", "source"}``): the hook's clock and, at a timeout, what
was running.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mlsmoke.doctests.execution import option_flags, run_files
from mlsmoke.doctests.results import results_to_json


class Progress:
    """Tells the hook what runs, and writes the report after each file."""

    def __init__(self, report: str, fd: int | None) -> None:
        self.report = report
        self.stream = os.fdopen(fd, "w", buffering=1) if fd is not None else None

    def file_started(self, shown: str) -> None:
        self._send({"file": shown})

    def example_started(self, shown: str, line: int, source: str) -> None:
        self._send({"file": shown, "line": line, "source": source})

    def file_done(self, results: list) -> None:
        partial = self.report + ".partial"
        with open(partial, "w", encoding="utf-8") as file:
            json.dump(results_to_json(results), file)
        os.replace(partial, self.report)

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
    flags = option_flags(request["optionflags"])
    progress = Progress(report_path, int(argv[2]) if len(argv) > 2 else None)
    results = run_files(files, Path(request["root"]), flags, progress)
    progress.file_done(results)  # also when there was no file
    return 0
