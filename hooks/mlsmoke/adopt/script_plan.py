"""Script mode as init writes it: the training script found in the source, the args
proposed for its tiny run, the function to pin, and what is left for the user."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mlsmoke.adopt import script_args, script_candidates
from mlsmoke.adopt.script_candidates import TrainingScript

ONE_LINE = 88  # args longer than this are written one per line


@dataclass(frozen=True)
class ScriptPlan:
    script: TrainingScript
    proposal: script_args.Proposal

    def summary(self) -> str:
        pinned = (
            f", pinned to {self.script.pin}()"
            if self.script.pin
            else ", pinned to its first DataLoader's first batch"
        )
        return f"script mode: {self.script.path}{pinned} (found: {self.script.why})"

    def args_lines(self) -> list[str]:
        """``args = [...]`` as pyproject.toml gets it (none when there are none)."""
        args = self.proposal.args
        if not args:
            return []
        line = f"args = [{', '.join(json.dumps(arg) for arg in args)}]"
        if len(line) <= ONE_LINE:
            return [line]
        return ["args = [", *(f"    {json.dumps(arg)}," for arg in args), "]"]

    def globals_lines(self) -> list[str]:
        """``globals = { ... }`` as pyproject.toml gets it (none when empty)."""
        given = self.proposal.globals
        if not given:
            return []
        values = ", ".join(f"{name} = {_toml(value)}" for name, value in given.items())
        return [f"globals = {{ {values} }}"]

    def notes(self) -> list[str]:
        proposed = self.proposal.style or "no"
        what = (
            f"args from its {proposed} settings: {' '.join(self.proposal.args)}"
            if self.proposal.args
            else "no args"
        )
        if self.proposal.globals:
            what = (
                "no args; globals for its module-level assignments: "
                + self.globals_lines()[0].removeprefix("globals = ")
            )
        return [f"{self.script.path}: {what}", *self.proposal.notes]


def find(root: Path, paths: Iterable[str], budget: int) -> ScriptPlan | None:
    """The training script among ``paths`` and its tiny run's args, or None."""
    found = script_candidates.find(root, paths)
    if found is None:
        return None
    try:
        source = (root / found.path).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return ScriptPlan(found, script_args.propose(found.path, source, budget))


def _toml(value: object) -> str:
    """A proposed value (a string, number or boolean) as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value)
