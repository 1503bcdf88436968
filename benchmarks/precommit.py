"""Real pre-commit for the benchmarks: this checkout as a hook repository, hook
environments built once per benchmark process, and the per-hook durations of
``pre-commit run -v``.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import ProcessRun, directory_mib, run_process
from tests.gitrepo import (  # noqa: F401 (git helpers the benchmarks share)
    GIT_IDENTITY,
    HookRepo,
    commit_all,
    git,
    init_git_repo,
    snapshot_checkout,
)

ROOT = Path(__file__).resolve().parents[1]
MLSMOKE_HOOKS = ("bash-strict-mode", "doctest", "overfit-batch")
_HOOK = re.compile(r"^- hook id: (?P<id>\S+)\n- duration: (?P<seconds>[\d.]+)s$", re.M)


@dataclass(frozen=True)
class HookEnvironment:
    """A PRE_COMMIT_HOME with mlsmoke's hook environment, and what building it cost."""

    home: Path
    install: ProcessRun
    environment_mib: float
    home_mib: float


def hook_durations(verbose_output: str) -> dict[str, float]:
    """Seconds per hook id from ``pre-commit run -v`` (skipped hooks have none)."""
    durations: dict[str, float] = {}
    for match in _HOOK.finditer(verbose_output):
        hook = match["id"]
        durations[hook] = durations.get(hook, 0.0) + float(match["seconds"])
    return durations


def scratch_dir() -> Path:
    """A directory that lives as long as this benchmark process."""
    return Path(_scratch().name)


@functools.cache
def hook_repo() -> HookRepo:
    """This checkout, working tree included, committed to a scratch git repository."""
    return snapshot_checkout(scratch_dir() / "mlsmoke-hook-repo")


def mlsmoke_config(hooks: Sequence[str] = MLSMOKE_HOOKS) -> str:
    repo = hook_repo()
    lines = ["repos:", f"  - repo: {repo.path}", f"    rev: {repo.rev}", "    hooks:"]
    return "\n".join(lines + [f"      - id: {hook}" for hook in hooks]) + "\n"


@functools.cache
def mlsmoke_hook_environment() -> HookEnvironment:
    """mlsmoke's hook environment built by ``pre-commit install-hooks`` in a fresh
    PRE_COMMIT_HOME, timed; later benchmarks reuse the home, warm."""
    home = scratch_dir() / "pre-commit-home"
    project = init_git_repo(scratch_dir() / "hook-env-project")
    (project / ".pre-commit-config.yaml").write_text(mlsmoke_config())
    commit_all(project, "config")
    install = pre_commit(project, home, "install-hooks").check("install-hooks")
    environments = list(home.glob("repo*/py_env-*"))
    if len(environments) != 1:
        raise RuntimeError(f"expected one mlsmoke environment, found {environments}")
    return HookEnvironment(
        home, install, directory_mib(environments[0]), directory_mib(home)
    )


def pre_commit(
    repo: Path,
    home: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    offline: bool = False,
    timeout: float = 900,
) -> ProcessRun:
    """``pre-commit args`` in ``repo``; ``offline`` runs it in a network namespace of
    its own, with no interface but loopback."""
    command = [sys.executable, "-m", "pre_commit", *args]
    if offline:
        command = ["unshare", "--net", *command]
    environ = {
        **os.environ,
        **GIT_IDENTITY,
        "PRE_COMMIT_HOME": str(home),
        "PRE_COMMIT_COLOR": "never",
        **(env or {}),
    }
    return run_process(command, cwd=repo, env=environ, timeout=timeout)


@functools.cache
def network_namespace_works() -> bool:
    """Whether ``unshare --net`` runs here (it needs root or user namespaces)."""
    try:
        completed = subprocess.run(
            ["unshare", "--net", "true"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return completed.returncode == 0


@functools.cache
def _scratch() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="mlsmoke-bench-")
