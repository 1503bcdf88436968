"""``mlsmoke new``'s expectations.json: recorded from the generated project's own
loader when an interpreter with torch is there to read it (the one ``mlsmoke expect``
would pick), so the suite matches the user's torch; otherwise the template's file
stays, recorded from the same loader with the torch the template pins.

Recording runs ``mlsmoke expect --record`` in a process of its own, as ``init`` does:
the project's modules are imported there, never in this process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from mlsmoke.errors import ConfigError, EnvironmentProblem
from mlsmoke.expect.settings import load_settings
from mlsmoke.interpreter import (
    ENV_VARIABLE,
    configured_python,
    first_that_imports,
    project_candidates,
)


class Outcome(NamedTuple):
    recorded: bool
    message: str


def record_expectations(project: Path) -> Outcome:
    """Record ``project``'s suite in place, or keep the shipped one; says which."""
    suite = project / load_settings(project).suite
    python = interpreter_with_torch(project)
    if python is None:
        return Outcome(
            False,
            f"{suite.name}: the template's (no interpreter with torch here to record"
            " it; `mlsmoke expect --record` below records it with the project's torch)",
        )
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "expect", "--record"],
        cwd=project,
        # No __pycache__ in the new project: ``new`` removed the template's.
        env={**os.environ, ENV_VARIABLE: str(python), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
    )
    if ran.returncode != 0:
        lines = (ran.stderr or ran.stdout).strip().splitlines()
        why = lines[0] if lines else f"exit {ran.returncode}"
        return Outcome(False, f"{suite.name}: the template's (recording failed: {why})")
    changes = [line for line in ran.stdout.splitlines() if line.startswith("  ")]
    same = (
        "the same as the template's"
        if not changes
        else "what differs from the template's:"
    )
    return Outcome(
        True,
        "\n".join(
            [f"{suite.name}: recorded from the project's loader with {python}, {same}"]
            + changes
        ),
    )


def interpreter_with_torch(project: Path) -> Path | None:
    """The interpreter ``mlsmoke expect`` would read the batches in, if it has torch."""
    try:
        settings = load_settings(project)
        configured = configured_python(project, "expect", settings.python)
        return first_that_imports(
            project_candidates(project, configured), ["torch"]
        ).path
    except (ConfigError, EnvironmentProblem):
        return None
