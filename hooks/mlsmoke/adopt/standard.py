"""The hooks ``mlsmoke init`` wires: the template's own ``.pre-commit-config.yaml``.

``init`` reads the template's repo and hook blocks as text (comments and
``additional_dependencies`` included), its placeholders filled from their one home,
:mod:`mlsmoke.hook_repos`, so a project adopted with ``init`` gets what ``mlsmoke new``
generates, but for pre-commit-hooks' checks, which it wires as their own hooks
(``upstream_basics.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mlsmoke import hook_repos
from mlsmoke.adopt.upstream_basics import with_upstream_basics
from mlsmoke.errors import UsageError
from mlsmoke.hook_source import HookSource, find_hook_source
from mlsmoke.new import find_template
from mlsmoke.offline_hooks import offline_config_text

CONFIG = ".pre-commit-config.yaml"
TEMPLATE_CONFIG = Path("{{cookiecutter.project_slug}}") / CONFIG
# The template's own layout: `- repo:` at column 2, its keys at 4; `- id:` at 6, 8.
REPO_DASH, REPO_KEY, HOOK_DASH, HOOK_KEY = 2, 4, 6, 8
GATE_HOOK = "overfit-batch"
EXPECT_HOOK = "data-expectations"  # wired only once a suite is recorded
DDP_HOOK = "overfit-batch-ddp"  # wired only once the gate passes on 2 ranks
CI_SKIP = ("warm-worker", "doctest", GATE_HOOK)
# Hooks that start work the later hooks use: their repo goes first in `repos:`.
FIRST_HOOKS = ("warm-worker",)

_REPO = re.compile(r"^ *- repo: *(\S+)")
_HOOK = re.compile(r"^ *- id: *(\S+)")


@dataclass(frozen=True)
class Hook:
    id: str
    lines: tuple[str, ...]  # `- id: x` and its keys, in the template's indentation


@dataclass(frozen=True)
class Repo:
    url: str
    header: tuple[str, ...]  # `- repo:`, `rev:` ... `hooks:`
    hooks: tuple[Hook, ...]

    @property
    def runs_first(self) -> bool:
        return bool(self.hooks) and all(hook.id in FIRST_HOOKS for hook in self.hooks)


def template_config_text(
    template: Path | None = None,
    source: HookSource | None = None,
    offline: bool = False,
) -> str:
    """The template's config, mlsmoke's hooks from ``source`` (default: where this
    mlsmoke was installed from); ``offline``: every hook without GitHub."""
    template = template or find_template()
    source = source or find_hook_source()
    text = (template / TEMPLATE_CONFIG).read_text(encoding="utf-8")
    text = text.replace("{{ cookiecutter.__mlsmoke_repo }}", source.repo)
    text = hook_repos.fill(text.replace("{{ cookiecutter.__mlsmoke_rev }}", source.rev))
    text = with_upstream_basics(text)
    if not offline:
        return text
    if not source.is_path:
        raise UsageError(
            f"--offline: mlsmoke's hooks would come from {source.repo}, which needs "
            "the network; pass --hooks-repo PATH (a clone of mlsmoke) [--hooks-rev REV]"
        )
    return offline_config_text(text, source.repo, source.rev)


def standard_repos(text: str | None = None) -> list[Repo]:
    """The repos of the template's config, in its order."""
    lines = (text if text is not None else template_config_text()).splitlines()
    starts = [i for i, line in enumerate(lines) if _REPO.match(line)]
    repos = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        repos.append(_repo(lines[start:end]))
    return repos


def _repo(block: list[str]) -> Repo:
    url = _REPO.match(block[0]).group(1)
    hook_starts = [i for i, line in enumerate(block) if _HOOK.match(line)]
    header = tuple(block[: hook_starts[0]] if hook_starts else block)
    hooks = []
    for n, start in enumerate(hook_starts):
        end = hook_starts[n + 1] if n + 1 < len(hook_starts) else len(block)
        body = [line for line in block[start:end] if line.strip()]
        hooks.append(Hook(_HOOK.match(block[start]).group(1), tuple(body)))
    return Repo(url, tuple(line for line in header if line.strip()), tuple(hooks))


def ci_reason() -> list[str]:
    return [
        "# warm-worker, doctest and overfit-batch need this project and torch.",
        "# pre-commit.ci has no network at run time and no project environment, so",
        "# it cannot run them: run them in your own CI",
        "# (`pre-commit run --all-files doctest`).",
    ]


TEMPLATE_FLAKE8 = Path("{{cookiecutter.project_slug}}") / ".flake8"
