"""``python -m mlsmoke.doctests.runner REQUEST REPORT``, in the project's interpreter.

Started by the hook through :func:`mlsmoke.interpreter.module_command`. REQUEST is a
JSON file naming the files and the option flags. The results go to the REPORT file as
JSON, since the project's code may print anything on stdout.
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


def main(argv: list[str]) -> int:
    request_path, report_path = argv
    with open(request_path, encoding="utf-8") as file:
        request = json.load(file)
    files = [(shown, Path(path)) for shown, path in request["files"]]
    flags = option_flags(request["optionflags"])
    results = run_files(files, Path(request["root"]), flags)
    with open(report_path, "w", encoding="utf-8") as file:
        json.dump(results_to_json(results), file)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # The report is written. Skip interpreter shutdown: the project's code may have left
    # non-daemon threads or slow atexit handlers behind, which would hang the commit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
