"""The floor under a prose commit: what a README change costs with none of mlsmoke's
hooks, measured in the same project and the same rounds as the commits themselves.

Two configs beside the project's own, each used for one ``git commit`` through a
hooks directory of its own (``core.hooksPath``, the project's hook script pointed at
the config), so the project's config stays as it is:

- ``pre-commit, no hook``: ``repos: []``, pre-commit's own start and git's;
- ``pre-commit and the basics``: only pre-commit-hooks' checks, as the config lists
  them (mlsmoke's basics hook, or pre-commit-hooks' own: five of them run on a
  Markdown file).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from benchmarks.measure import ProcessRun, run_process
from benchmarks.precommit import git
from mlsmoke.adopt.upstream_basics import BASICS  # mlsmoke's hook running them

UPSTREAM_BASICS = "pre-commit-hooks"  # the repo (or, offline, the dependency) name
FLOORS = ("pre-commit, no hook", "pre-commit and the basics")


def floor_configs(config: Path) -> dict[str, Path]:
    """Each floor's hooks directory, written under ``.git`` from ``config``."""
    document = yaml.safe_load(config.read_text())
    keeps: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
        FLOORS[0]: lambda repo, hook: False,
        FLOORS[1]: _is_upstream_basic,
    }
    git_dir = config.parent / ".git"
    script = (git_dir / "hooks" / "pre-commit").read_text()
    hooks_dirs = {}
    for index, (floor, keep) in enumerate(keeps.items()):
        repos = []
        for repo in document["repos"]:
            hooks = [hook for hook in repo["hooks"] if keep(repo, hook)]
            if hooks:
                repos.append({**repo, "hooks": hooks})
        floor_config = git_dir / f"mlsmoke-bench-floor-{index}.yaml"
        floor_config.write_text(yaml.safe_dump({"repos": repos}, sort_keys=False))
        hooks_dir = git_dir / f"mlsmoke-bench-floor-{index}-hooks"
        hooks_dir.mkdir(exist_ok=True)
        hook = hooks_dir / "pre-commit"
        hook.write_text(
            script.replace(f"--config={config.name}", f"--config={floor_config}")
        )
        hook.chmod(0o755)
        hooks_dirs[floor] = hooks_dir
    return hooks_dirs


def _is_upstream_basic(repo: dict[str, Any], hook: dict[str, Any]) -> bool:
    """pre-commit-hooks' checks: as their own hooks, or as mlsmoke's basics hook."""
    dependencies = " ".join(hook.get("additional_dependencies", []))
    return (
        hook["id"] == BASICS
        or UPSTREAM_BASICS in str(repo["repo"])
        or UPSTREAM_BASICS in dependencies
    )


def floor_commit(
    project: Path, hooks_dir: Path, changed: Path, message: str, env: Mapping[str, str]
) -> ProcessRun:
    """``git commit`` of ``changed`` through the floor's hooks directory."""
    git(project, "add", str(changed))
    command = ["git", "-c", f"core.hooksPath={hooks_dir}", "commit", "-m", message]
    return run_process(command, cwd=project, env=env).check(f"git commit ({message})")
