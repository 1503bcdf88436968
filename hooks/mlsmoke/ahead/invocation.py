"""What the pre-commit run that started this hook will give its other hooks, read from
its command line (``/proc/<parent>/cmdline``): its config file, and the files it
checks. A guess that is wrong costs only the run ahead: each hook compares what it was
given with what its job ran on, and runs itself when they differ.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

DEFAULT_CONFIG = ".pre-commit-config.yaml"
_STAGED = ["git", "diff", "--staged", "--name-only", "--no-ext-diff", "-z"]
_CHANGED = "--diff-filter=ACMRTUXB"  # pre-commit's: no deleted files
_TRACKED = ["git", "ls-files", "-z"]


class Invocation(NamedTuple):
    config: str
    all_files: bool
    other_files: bool  # --files, a ref range or another stage: not guessed


def invocation() -> Invocation | None:
    """The parent pre-commit's options; None when its command line cannot be read."""
    try:
        raw = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    except OSError:
        return None
    return parse([part.decode(errors="replace") for part in raw.split(b"\0") if part])


def parse(argv: list[str]) -> Invocation:
    """``pre-commit run`` or ``hook-impl``'s options that decide the files."""
    config, all_files, other = DEFAULT_CONFIG, False, False
    for i, arg in enumerate(argv):
        name, _, value = arg.partition("=")
        if name in ("-c", "--config"):
            config = value or (argv[i + 1] if i + 1 < len(argv) else config)
        elif arg in ("-a", "--all-files"):
            all_files = True
        elif name in ("--files", "-s", "--from-ref", "-o", "--to-ref"):
            other = True
        elif name in ("--hook-type", "--hook-stage"):
            stage = value or (argv[i + 1] if i + 1 < len(argv) else "")
            other = other or stage not in ("pre-commit", "")
    other = other or "PRE_COMMIT_FROM_REF" in os.environ
    return Invocation(config, all_files, other)


def lists_hook(config: Path, hook_id: str) -> bool:
    """Whether the config file has a hook ``hook_id`` (by its text: no YAML parser)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    pattern = rf"^\s*(-\s*)?id:\s*['\"]?{re.escape(hook_id)}['\"]?\s*(#.*)?$"
    return re.search(pattern, text, re.M) is not None


def files_to_check(root: Path, run: Invocation) -> list[str] | None:
    """The files this run checks, as git names them (before any hook's filter);
    None when they cannot be told."""
    if run.other_files:
        return None
    command = _TRACKED if run.all_files else [*_STAGED, _CHANGED]
    try:
        listed = subprocess.run(
            command, cwd=root, capture_output=True, check=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [name for name in listed.decode().split("\0") if name]
