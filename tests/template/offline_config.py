"""Rewrite a project's ``.pre-commit-config.yaml`` for a machine without GitHub.

pre-commit clones every ``repo:`` from GitHub, which the test and demo machines cannot
reach. This keeps the hooks and their pinned versions and changes only where they come
from, with :mod:`mlsmoke.offline_hooks` (what ``mlsmoke init --offline`` writes):

- mlsmoke's hooks come from a local git repository (this checkout, committed);
- each third-party hook becomes a ``repo: local`` hook with ``language: python`` that
  installs the same pinned version from PyPI through ``additional_dependencies``, with
  the hook's own plugins (flake8's torchfix) beside it.

Used by the end-to-end tests and benchmarks. As a script:
``python tests/template/offline_config.py CONFIG --hook-repo PATH --rev REV``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from mlsmoke.offline_hooks import UPSTREAMS, local_hooks, offline_repos, pypi_version

__all__ = ["UPSTREAMS", "local_hooks", "offline_config", "pypi_version"]
MLSMOKE_URL = "https://github.com/mlsmoke/mlsmoke"


def offline_config(
    config: Mapping[str, Any], hook_repo: str, rev: str
) -> dict[str, Any]:
    """``config`` with mlsmoke from ``hook_repo`` at ``rev`` and the rest from PyPI."""
    return {**config, "repos": offline_repos(config["repos"], hook_repo, rev)}


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
