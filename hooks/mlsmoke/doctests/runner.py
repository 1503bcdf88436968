"""``python -m mlsmoke.doctests.runner REQUEST REPORT [FD]``, in the project's
interpreter.

Started by the hook through :func:`mlsmoke.interpreter.module_command`. REQUEST is a
JSON file naming the files and the option flags. The results go to the REPORT file as
JSON, rewritten after each file, since the project's code may print anything on stdout.
When FD is given, each file's and each example's start goes there as a JSON line
(``{"file"}``, ``{"file", "line", "source"}``): the hook's clock and, at a timeout, what
was running.
"""

from __future__ import annotations

import sys

# Like ``python -m``, the bootstrap leaves the working directory (the project root)
# first on sys.path: a project file named json.py or types.py would then replace the
# standard library modules imported below. execution.py puts the project's roots back.
if sys.path[:1] == [""]:
    del sys.path[0]

import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

from mlsmoke.doctests.execution import option_flags, run_files  # noqa: E402
from mlsmoke.doctests.results import results_to_json  # noqa: E402


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


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # The report is written. Skip interpreter shutdown: the project's code may have left
    # non-daemon threads or slow atexit handlers behind, which would hang the commit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
