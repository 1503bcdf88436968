"""What ``mlsmoke profile`` profiles: the overfit gates' factory models, or a training
script, chosen from the command line and the configuration.

In order: ``--script PATH`` (arguments after ``--``); ``[tool.mlsmoke.profile]``'s
``script`` and ``args``; else each gate of ``[tool.mlsmoke.overfit]``, a script-mode
gate (``script``, ``args``) as a script. Arguments after ``--`` replace the configured
ones. No torch here.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Union

from mlsmoke.errors import UsageError
from mlsmoke.overfit.process.settings import GateSettings, load_gates, select_gates
from mlsmoke.profile import settings

AFTER_DASHES = "the arguments after --"


@dataclass
class ScriptTarget:
    """A training script to profile, and the keys (or flags) that named it."""

    name: str  # the profile's name: a gate's, or the script's path
    path: str  # relative to the project root
    args: list[str] = field(default_factory=list)
    script_key: str = "--script"
    args_key: str = AFTER_DASHES
    python: str | None = None  # a gate's own python key
    # a gate's values for the script's module-level assignments, and their key
    globals: dict[str, Any] = field(default_factory=dict)
    globals_key: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptTarget:
        return cls(**data)

    def key(self, which: str) -> str:
        return self.args_key if which == "args" else self.script_key


Target = Union[GateSettings, ScriptTarget]


def choose(
    root: Path,
    script: str | None,
    script_args: list[str] | None,
    gate: str | None,
) -> list[Target]:
    """The profiles to run; UsageError or ConfigError naming the flag or key."""
    if script is not None:
        if gate is not None:
            raise UsageError("--gate: not with --script, which names what to profile")
        path = script_in_project(root, script)
        return [ScriptTarget(path, path, script_args or [])]
    configured = settings.load(root)
    if configured.script is not None and gate is None:
        args_key = f"{settings.KEY_PATH}.args"
        if script_args is not None:
            args, args_key = script_args, AFTER_DASHES
        else:
            args = configured.args
        return [ScriptTarget(configured.script, configured.script, args,
                             f"{settings.KEY_PATH}.script", args_key)]  # fmt: skip
    gates = select_gates(load_gates(root), gate)
    if script_args is not None and not any(g.script for g in gates):
        raise UsageError(
            f"{AFTER_DASHES} are a training script's: give --script PATH, or set"
            f" script in [{settings.KEY_PATH}]"
        )
    return [_as_target(g, script_args) for g in gates]


def _as_target(gate: GateSettings, script_args: list[str] | None) -> Target:
    if gate.script is None:
        return gate
    args, args_key = gate.args, gate.key_path("args")
    if script_args is not None:
        args, args_key = script_args, AFTER_DASHES
    return ScriptTarget(gate.name, gate.script, list(args),
                        gate.key_path("script"), args_key, gate.python,
                        dict(gate.globals), gate.key_path("globals"))  # fmt: skip


def script_in_project(root: Path, given: str) -> str:
    """``--script``'s file, relative to the project root; UsageError when it is not a
    file inside the project."""
    path = Path(os.path.abspath(given))
    if not path.is_file():
        where = "is a directory" if path.is_dir() else "no such file"
        raise UsageError(f"--script {given}: {where}")
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise UsageError(
                f"--script {given}: not inside the project at {root}"
            ) from None


def split_dashes(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``argv`` before the first ``--``, and the script's arguments after it (None
    without one)."""
    if "--" not in argv:
        return argv, None
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]
