"""One catalog case end to end: ``mlsmoke overfit`` in a fresh process, as a commit
runs it with no warm worker.

The case's factories are named in a scratch project's ``pyproject.toml`` through a
module that looks the case up by name, so the command pays what a failing commit
pays and the in-process figures do not: the interpreter's start, the imports of
torch and of the catalog's module (every library its cases use, so an upper bound
for one case), reading the settings, the gate, its probes and interventions, and
the report.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.measure import run_process

ROOT = Path(__file__).resolve().parents[1]

SHIM = """\
import sys

sys.path.insert(0, {root!r})
from {module} import CASES  # noqa: E402

CASE = next(case for case in CASES if case.name == {name!r})
model, batch, loss, optimizer = CASE.model, CASE.batch, CASE.loss, CASE.optimizer
"""


@dataclass(frozen=True)
class CommandRun:
    seconds: float
    cpu_seconds: float  # the command and the processes it waited for
    code: str  # the diagnosis code the command's --json gave
    import_seconds: float  # a fresh interpreter importing the catalog module alone


def run_case_command(module: str, case: Any, threads: int | None) -> CommandRun:
    """``case`` (from ``module``'s CASES) through ``mlsmoke overfit``, worker off,
    ``threads`` torch threads (None: torch's default)."""
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-cli-") as tmp:
        project = Path(tmp)
        (project / "catalog_case.py").write_text(
            SHIM.format(root=str(ROOT), module=module, name=case.name)
        )
        (project / "pyproject.toml").write_text(_pyproject(case))
        env = {**os.environ, "MLSMOKE_WORKER": "0", "MLSMOKE_PYTHON": sys.executable}
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)
        report = project / "verdict.json"
        command = [sys.executable, "-m", "mlsmoke", "overfit", "--no-cache",
                   "--json", str(report)]  # fmt: skip
        run = run_process(command, cwd=project, env=env, timeout=300)
        code = "?"
        if report.exists():
            gates = json.loads(report.read_text())
            code = _diagnosis_code(gates)
        imports = run_process(
            [sys.executable, "-c", "import catalog_case"], cwd=project, env=env
        )
        return CommandRun(run.seconds, run.cpu_seconds, code, imports.seconds)


def _pyproject(case: Any) -> str:
    lines = [
        "[tool.mlsmoke.overfit]",
        'model = "catalog_case:model"',
        'batch = "catalog_case:batch"',
        'device = "cpu"',
        "seed = 0",
    ]
    if case.loss is not None:
        lines.append('loss = "catalog_case:loss"')
    if case.optimizer is not None:
        lines.append('optimizer = "catalog_case:optimizer"')
    for key, value in case.options.items():
        lines.append(f"{key.replace('_', '-')} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def _diagnosis_code(gates: list[dict[str, Any]]) -> str:
    """The first gate's diagnosis code in ``--json``'s list of gates."""
    return str(gates[0]["diagnosis"]["code"]) if gates else "?"
