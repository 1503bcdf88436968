"""The gate's configuration: from --model/--batch, a choice at a prompt, or none."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from mlsmoke.adopt import pyproject_edit as toml
from mlsmoke.adopt.baselines import Project
from mlsmoke.adopt.candidates import Candidate, Candidates
from mlsmoke.errors import UsageError

TABLE = "tool.mlsmoke.overfit"


@dataclass(frozen=True)
class Gate:
    on: bool  # overfit-batch wired (else commented out)
    run: bool  # run it once after writing
    summary: str
    model: str | None = None
    batch: str | None = None


def choose(project: Project, found: Candidates, args: argparse.Namespace) -> Gate:
    from mlsmoke.overfit.process.settings import factory_spec

    data = toml.parse(project.pyproject.text, project.name(project.pyproject))
    existing = toml.lookup(data, TABLE)
    model, batch = args.model, args.batch
    if not (model or batch) and not existing and not args.dry_run:
        model, batch = _prompt(found)
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
        return Gate(True, True, f"overfit-batch on: {model} with {batch}", model, batch)
    if existing:
        return Gate(True, False, f"overfit-batch on: [{TABLE}] was already configured")
    return Gate(
        False,
        False,
        "overfit-batch is commented out in .pre-commit-config.yaml, with the "
        f"{len(found.models)} model and {len(found.batches)} batch candidates found",
    )


def write(project: Project, gate: Gate) -> None:
    if gate.model is None:
        return
    name = project.name(project.pyproject)
    for key, value in (("model", gate.model), ("batch", gate.batch)):
        project.pyproject.text = toml.set_key(
            project.pyproject.text, name, TABLE, key, [toml.string_line(key, value)]
        )


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
