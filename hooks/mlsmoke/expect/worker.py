"""``mlsmoke expect``'s entry point inside the project's interpreter.

Run by the command through :func:`mlsmoke.overfit.process.spawn.spawn`, as the gate's
worker is: REQUEST RESULT FD. REQUEST is ``{"root", "settings": ExpectSettings}``;
the outcome of ``session.observe_project``, with the project files the loaders
imported (``sources``), goes to RESULT, and ``{"gate": "expect", "start": timeout}``
to FD once torch is imported, which gives the read ``timeout`` seconds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.errors import EXIT_INTERRUPTED
from mlsmoke.expect.settings import ExpectSettings
from mlsmoke.overfit.process.imports import project_modules
from mlsmoke.overfit.process.worker import enter_project


def main(argv: Sequence[str]) -> int:
    request_path, result_path, fd = argv[0], argv[1], int(argv[2])
    request = json.loads(Path(request_path).read_text())
    root = Path(request["root"])
    settings = ExpectSettings.from_json(request["settings"])
    enter_project(root)
    try:
        from mlsmoke.expect.session import observe_project

        with os.fdopen(fd, "w", buffering=1) as progress:
            start = {"gate": "expect", "start": settings.timeout}
            progress.write(json.dumps(start) + "\n")
        outcome = observe_project(settings)
        outcome["sources"] = project_modules(root)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    partial = Path(result_path + ".partial")
    partial.write_text(json.dumps(outcome))
    os.replace(partial, result_path)
    return 0
