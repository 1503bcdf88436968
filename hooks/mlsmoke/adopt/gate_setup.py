"""The gate's configuration: from --model/--batch, a choice at a prompt, the
project's training script (script mode), the first buildable candidates, or a factory
module for the user to finish; and its first run.

``init`` never turns on a gate that did not pass: the hook is written commented out,
the gate runs once, and only a pass turns it on. A failure keeps it off with the
verdict beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlsmoke.adopt import gate_module
from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.candidates import Candidate, Candidates
from mlsmoke.adopt.script_plan import ScriptPlan
from mlsmoke.adopt.step_candidates import StepCandidate
from mlsmoke.errors import UsageError

TABLE = "tool.mlsmoke.overfit"


@dataclass(frozen=True)
class Gate:
    summary: str
    model: str | None = None  # to write to [tool.mlsmoke.overfit]
    batch: str | None = None
    optimizer: str | None = None
    module: gate_module.GateModule | None = None  # mlsmoke_gate.py, to write
    run: bool = False  # run it once, then turn it on if it passed
    explicit: bool = False  # --model/--batch: a failure is init's failure
    step: str | None = None  # the project's step function, kept if the gate passes
    script: ScriptPlan | None = None  # script mode: script, args and pin to write


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str  # "lr-too-low: the learning rate 6e-07 is too low: ..."
    steps: int = 0  # the steps it trained
    seconds: float = 0.0


def choose(
    project: Project,
    found: Candidates,
    args: argparse.Namespace,
    script: ScriptPlan | None = None,
) -> Gate:
    from mlsmoke.overfit.process.settings import factory_spec

    data = toml.parse(project.pyproject.text, project.name(project.pyproject))
    existing = toml.lookup(data, TABLE)
    model, batch = args.model, args.batch
    if args.no_gate:
        return Gate("overfit-batch is left off (--no-gate)")
    if model or batch:
        if not (model and batch):
            raise UsageError("--model and --batch go together: give both")
        factory_spec(model, "--model")
        factory_spec(batch, "--batch")
        if isinstance(existing, dict) and not args.force:
            if (existing.get("model"), existing.get("batch")) != (model, batch):
                raise UsageError(
                    f"pyproject.toml: [{TABLE}] is already configured; "
                    "--force replaces its model and batch"
                )
        return Gate(f"{model} with {batch}", model, batch, run=True, explicit=True)
    if existing:
        return Gate(f"[{TABLE}] as configured", run=True)
    if script is not None:  # what the project itself runs, at a tiny size
        return Gate(script.summary(), run=True, script=script)
    if not args.dry_run:
        model, batch = _prompt(found)
        if model and batch:
            return Gate(f"{model} with {batch}", model, batch, run=True)
    return _found(project, found)


def _found(project: Project, found: Candidates) -> Gate:
    """The first buildable model and batch factories, completed where either is
    missing by mlsmoke_gate.py, which builds what the source allows."""
    if found.models and found.batches:
        model, batch = found.models[0].spec, found.batches[0].spec
        return Gate(f"{model} with {batch} (found)", model, batch, run=True)
    if not (found.models or found.classes or found.batches):
        return Gate("no model found: overfit-batch stays commented out")
    if (project.root / gate_module.FILENAME).exists():
        return Gate(
            f"{gate_module.FILENAME} exists: name its factories in [{TABLE}] and run "
            "`mlsmoke init` again"
        )
    written = gate_module.gate_module(found)
    model = found.models[0].spec if found.models else written.model
    batch = found.batches[0].spec if found.batches else written.batch
    optimizer = written.optimizer if model == written.model else None
    todo = unfinished(written, [model, batch, optimizer])
    wait = f"; it runs once its {len(todo)} TODOs are done" if todo else ""
    return Gate(
        f"{model} with {batch} ({gate_module.FILENAME} written for you to"
        f" finish{wait})",
        model,
        batch,
        optimizer,
        written,
        run=not todo,
    )


def unfinished(written: gate_module.GateModule, used: list[str | None]) -> list[str]:
    """The TODOs of ``written`` in the factories the gate would call: a run of them
    could only raise their NotImplementedError."""
    names = {spec.replace(":", ".") for spec in used if spec}
    return [todo for todo in written.todo if todo.split(":")[0] in names]


def with_step(
    project: Project, gate: Gate, step: StepCandidate | None, dry_run: bool
) -> Gate:
    """``gate`` with the project's one callable step function to try: when init
    writes the gate's model and batch and runs it, and the table has no step yet."""
    if step is None or dry_run or not gate.run or gate.model is None:
        return gate
    data = toml.parse(project.pyproject.text, project.name(project.pyproject))
    if toml.lookup(data, f"{TABLE}.step") is not None:
        return gate
    return dataclasses.replace(gate, step=step.spec)


def write(project: Project, gate: Gate) -> None:
    """The gate's keys in pyproject.toml (in memory); mlsmoke_gate.py is written
    by :func:`write_module`, after the checks that it may be."""
    name = project.name(project.pyproject)
    if gate.script is not None:
        _write_script(project, gate.script)
    keys = (
        ("model", gate.model),
        ("batch", gate.batch),
        ("optimizer", gate.optimizer),
        ("step", gate.step),
    )
    for key, value in keys:
        if value is None:
            continue
        project.pyproject.text = toml.set_key(
            project.pyproject.text, name, TABLE, key, [toml.string_line(key, value)]
        )


def budget(project: Project) -> int:
    """The steps the gate will have: its table's max-steps, else the default."""
    from mlsmoke.overfit.process.settings import DEFAULT_TIER, TIER_DEFAULTS

    data = toml.parse(project.pyproject.text, project.name(project.pyproject))
    configured = toml.lookup(data, f"{TABLE}.max-steps")
    if isinstance(configured, int) and not isinstance(configured, bool):
        return configured
    return int(TIER_DEFAULTS[DEFAULT_TIER]["max-steps"])


def _write_script(project: Project, plan: ScriptPlan) -> None:
    name = project.name(project.pyproject)
    blocks = [
        ("script", [toml.string_line("script", plan.script.path)]),
        ("args", plan.args_lines()),
        ("globals", plan.globals_lines()),
        ("pin", [toml.string_line("pin", plan.script.pin)] if plan.script.pin else []),
    ]
    for key, block in blocks:
        if block:
            project.pyproject.text = toml.set_key(
                project.pyproject.text, name, TABLE, key, block
            )


def set_calibrated(project: Project, key: str, value: int, why: str) -> None:
    """``key`` (max-steps, timeout) of the gate's table (in memory), under a comment
    saying why."""
    name = project.name(project.pyproject)
    block = [f"# {why}", f"{key} = {value}"]
    project.pyproject.text = toml.set_key(
        project.pyproject.text, name, TABLE, key, block
    )


def drop_step(project: Project) -> None:
    """The ``step`` key out of the gate's table (in memory)."""
    name = project.name(project.pyproject)
    project.pyproject.text = toml.set_key(
        project.pyproject.text, name, TABLE, "step", []
    )


def run_once(root: Path) -> Verdict:
    """Run the gate as the hook will, its output shown; the verdict, read back."""
    print("Running the gate once: mlsmoke overfit", flush=True)
    with tempfile.TemporaryDirectory(prefix="mlsmoke-init-") as scratch:
        report = Path(scratch) / "gate.json"
        ran = subprocess.run(
            [sys.executable, "-m", "mlsmoke", "overfit", "--json", str(report)],
            cwd=root,
        )
        return verdict(ran.returncode, report)


def verdict(returncode: int, report: Path) -> Verdict:
    """The gate's verdict from its exit code and its --json report."""
    try:
        results = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        results = []
    reasons = [
        f"{r['diagnosis']['code']}: {r['diagnosis']['summary']}"
        for r in results
        if isinstance(r, dict) and r.get("verdict") != "pass"
    ]
    ran = [r for r in results if isinstance(r, dict)]
    steps = max((_steps_to_pass(r) for r in ran), default=0)
    seconds = max((r.get("seconds") or 0.0 for r in ran), default=0.0)
    if returncode == 0:
        return Verdict(True, "passed", steps, seconds)
    reason = reasons[0] if reasons else f"exit {returncode}"
    return Verdict(False, reason, steps, seconds)


def _steps_to_pass(result: dict) -> int:
    """Result.steps_to_pass, read from a --json report."""
    diagnosis = result.get("diagnosis")
    reached = diagnosis.get("memorized_in") if isinstance(diagnosis, dict) else None
    return reached if isinstance(reached, int) else result.get("steps") or 0


def _prompt(found: Candidates) -> tuple[str | None, str | None]:
    if not (sys.stdin.isatty() and found.models and found.batches):
        return None, None
    model = _pick("model", found.models)
    batch = _pick("batch", found.batches) if model else None
    return model, batch


def _pick(kind: str, options: Sequence[Candidate]) -> str | None:
    print(f"Candidate {kind} factories for the overfit-batch gate:")
    for number, option in enumerate(options, 1):
        print(f"  {number}. {option.spec}  ({option.why})")
    try:
        answer = input(f"{kind} [1-{len(options)}, Enter to leave the gate off]: ")
    except EOFError:
        return None
    if answer.strip().isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1].spec
    return None
