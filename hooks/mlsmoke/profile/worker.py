"""``mlsmoke profile``'s entry point inside the project's interpreter.

Run by the command through :func:`mlsmoke.overfit.process.spawn.spawn`, as the gate's
worker is: REQUEST RESULT FD. REQUEST is ``{"root", "gate": GateSettings, "steps",
"warmup", "trace", "device", "timeout"}``, or with ``"script": ScriptTarget`` in place
of ``"gate"``; the outcome of ``session.profile_gate`` (or
``script_session.profile_script``) goes to RESULT, and ``{"gate", "start": timeout}``
to FD when the profile starts, which once torch is imported, gives it ``timeout``
seconds before the command kills it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from mlsmoke.errors import EXIT_INTERRUPTED
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.process.worker import enter_project
from mlsmoke.profile.targets import ScriptTarget


def main(argv: Sequence[str]) -> int:
    request_path, result_path, fd = argv[0], argv[1], int(argv[2])
    request = json.loads(Path(request_path).read_text())
    root = Path(request["root"])
    enter_project(root)
    script = request.get("script")
    target = ScriptTarget.from_json(script) if script else None
    settings = None if target else GateSettings.from_json(request["gate"])
    name = target.name if target else settings.name  # type: ignore[union-attr]
    try:
        # torch is imported before the profile's time starts, as for the gate
        from mlsmoke.profile.script_session import profile_script
        from mlsmoke.profile.session import Request, profile_gate

        with os.fdopen(fd, "w", buffering=1) as progress:
            start = {"gate": name, "start": request["timeout"]}
            progress.write(json.dumps(start) + "\n")
        asked = Request(
            request["steps"], request["warmup"], request["trace"], request["device"]
        )
        if target is not None:
            outcome = profile_script(target, asked, root)
        else:
            outcome = profile_gate(settings, asked, root)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    partial = Path(result_path + ".partial")
    partial.write_text(json.dumps(outcome))
    os.replace(partial, result_path)
    return 0
