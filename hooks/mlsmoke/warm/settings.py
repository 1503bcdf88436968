"""Whether the hooks use the warm worker, and for how long an idle one stays.

On by default where forking a process that has imported torch is safe: Linux (fork
exists elsewhere, but macOS's system libraries are not fork-safe once loaded). Turned
off by ``[tool.mlsmoke.worker] enabled = false`` or ``MLSMOKE_WORKER=0``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mlsmoke.config import (
    TOOL_PATH,
    Key,
    boolean,
    hook_table,
    timeout_seconds,
    validate,
)

ENV_SWITCH = "MLSMOKE_WORKER"
ENV_IDLE = "MLSMOKE_WORKER_IDLE"
ENV_DIRECTORY = "MLSMOKE_WORKER_DIR"
DEFAULT_IDLE = 600.0  # seconds: a worker outlives the commit, not the working session
_OFF = {"0", "off", "false", "no"}

SCHEMA = {
    "enabled": Key(boolean, True, "use the warm worker where it is safe (Linux)"),
    "idle": Key(timeout_seconds, DEFAULT_IDLE, "seconds an idle worker stays"),
}


@dataclass(frozen=True)
class WorkerSettings:
    enabled: bool
    idle: float
    why_off: str = ""  # for -v and `mlsmoke worker status`


def worker_settings(
    root: Path, environ: Mapping[str, str], platform: str = sys.platform
) -> WorkerSettings:
    """The worker's settings for ``root``: the config table, then the environment."""
    table = validate(hook_table(root, "worker"), SCHEMA, f"{TOOL_PATH}.worker")
    idle = table["idle"]
    if environ.get(ENV_IDLE):
        idle = timeout_seconds(_number(environ[ENV_IDLE]), ENV_IDLE)
    if not platform.startswith("linux") or not hasattr(os, "fork"):
        return WorkerSettings(False, idle, f"not on {platform}: fork after torch")
    if environ.get(ENV_SWITCH, "").strip().lower() in _OFF:
        return WorkerSettings(False, idle, f"{ENV_SWITCH}={environ[ENV_SWITCH]}")
    if not table["enabled"]:
        return WorkerSettings(False, idle, f"{TOOL_PATH}.worker.enabled = false")
    return WorkerSettings(True, idle)


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text
