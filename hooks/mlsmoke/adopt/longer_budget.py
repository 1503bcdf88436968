"""A first run that fell short of steps and nothing else (``too-slow``: the loss fell
steadily, and its fitted curve reaches the target past ``max-steps``) is run once
more with LONGER times the steps and the time. A pass there is a pass: init then
calibrates ``max-steps`` from it, and the hook goes on. Any other failure stands."""

from __future__ import annotations

import dataclasses

from mlsmoke.adopt import calibrate, gate_setup
from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.gate_setup import Verdict

LONGER = 4
SHORT_OF_STEPS = "too-slow"


def short_of_steps(verdict: Verdict) -> bool:
    return not verdict.passed and verdict.reason.startswith(f"{SHORT_OF_STEPS}:")


def retry_with_more_steps(project: Project, verdict: Verdict) -> Verdict:
    """``verdict``, or the verdict of one run with LONGER times the budget when the
    first was only short of steps and init may set ``max-steps``."""
    data = toml.parse(project.pyproject.text, project.name(project.pyproject))
    if not short_of_steps(verdict) or not calibrate.applies(
        toml.lookup(data, gate_setup.TABLE)
    ):
        return verdict
    from mlsmoke.interpreter import (
        configured_python,
        first_that_imports,
        project_candidates,
    )
    from mlsmoke.overfit.process.settings import load_gates
    from mlsmoke.overfit.process.run_gates import run_worker

    (gate,) = load_gates(project.root)
    longer = dataclasses.replace(
        gate, max_steps=LONGER * gate.max_steps, timeout=LONGER * gate.timeout
    )
    print(
        f"mlsmoke init: the loss was still falling at max-steps = {gate.max_steps};"
        f" running the gate once more with up to {longer.max_steps} steps",
        flush=True,
    )
    configured = configured_python(project.root, "overfit", gate.python)
    python = first_that_imports(project_candidates(project.root, configured), ["torch"])
    results, _ = run_worker(project.root, python.path, [longer], None, False)
    if not results or not results[0].passed:
        return verdict
    result = results[0]
    steps = result.steps_to_pass
    print(f"mlsmoke init: with more steps the gate passed in {steps} steps")
    return Verdict(True, "passed", steps, result.seconds)
