"""What ``mlsmoke init`` wires where the template has mlsmoke's ``basics`` hook:
pre-commit-hooks' own hooks, one per check.

An adopted repository keeps its debt in each hook's ``exclude:`` (``baselines.py``): a
file with trailing whitespace today is left out of trailing-whitespace alone, not of
detect-private-key. The basics hook gives all its checks the same files, so ``init``
wires the checks as their own hooks, at the rev ``hook_repos`` pins, and ``mlsmoke new``
the faster basics hook.
"""

from __future__ import annotations

import re
from typing import Any

from mlsmoke.adopt import yamltree as tree
from mlsmoke.basics.checks import CHECKS
from mlsmoke.hook_repos import HOOK_REPOS

BASICS = "basics"
_BASICS_HOOK = re.compile(r"^( *)- id: *basics *$")
_REPO = re.compile(r"^( *)- repo:")


def with_upstream_basics(text: str) -> str:
    """The template's config ``text`` with its basics hook replaced by
    pre-commit-hooks' repo, listed after the repo that held it."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _BASICS_HOOK.match(line)), None)
    if start is None:
        return text
    dash = len(_BASICS_HOOK.match(lines[start]).group(1))
    end = start + 1
    while end < len(lines) and _indent(lines[end]) > dash:
        end += 1
    repo_start = max(i for i in range(start) if _REPO.match(lines[i]))
    repo_dash = len(_REPO.match(lines[repo_start]).group(1))
    after = next(
        (i for i in range(end, len(lines)) if _REPO.match(lines[i])), len(lines)
    )
    kept = lines[:start] + lines[end:after]
    if not any(line.lstrip().startswith("- id:") for line in kept[repo_start:]):
        kept = kept[:repo_start]  # the basics hook was the repo's only hook
    return "".join(kept + _upstream_repo(repo_dash, dash) + lines[after:])


def run_by_basics(root: Any) -> set[str]:
    """The checks a config's basics hook runs (a project from ``mlsmoke new``), which
    ``init`` must not wire a second time as their own hooks."""
    return set(CHECKS) if tree.find_hook(root, BASICS) is not None else set()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip()) if line.strip() else 10**6


def upstream_repo() -> dict[str, Any]:
    """pre-commit-hooks' repo at its pinned rev, a hook for each check of basics."""
    pinned = HOOK_REPOS["pre_commit_hooks"]
    hooks = [{"id": check} for check in CHECKS]
    return {"repo": pinned["repo"], "rev": pinned["rev"], "hooks": hooks}


def _upstream_repo(repo_dash: int, hook_dash: int) -> list[str]:
    repo = upstream_repo()
    key = " " * (repo_dash + 2)
    return [
        f"{' ' * repo_dash}- repo: {repo['repo']}\n",
        f"{key}rev: {repo['rev']}\n",
        f"{key}hooks:\n",
        *(f"{' ' * hook_dash}- id: {hook['id']}\n" for hook in repo["hooks"]),
    ]
