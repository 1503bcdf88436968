"""Today's debt: what every wired hook would fail on, with its baseline taken out."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mlsmoke.adopt import hook_baseline, own_hooks, tools
from mlsmoke.adopt import yamltree as tree
from mlsmoke.adopt.baselines import (
    BLACK,
    DOCTEST,
    FLAKE8,
    HOOK_EXCLUDE_TOOLS,
    STRICT_MODE,
    Debt,
    Project,
)
from mlsmoke.adopt.repofiles import RepoFile, select, tracked_files
from mlsmoke.errors import ConfigError

TORCHFIX = "torchfix"  # mlsmoke's hook: flake8 with TorchFix, its codes only


@dataclass(frozen=True)
class Selector:
    types: tuple[str, ...] = ()
    types_or: tuple[str, ...] = ()
    exclude_types: tuple[str, ...] = ()


# The file types each hook gets, as in the hooks' manifests.
SELECTORS = {
    "trailing-whitespace": Selector(("text",)),
    "end-of-file-fixer": Selector(("text",)),
    "check-yaml": Selector(("yaml",)),
    "check-toml": Selector(("toml",)),
    "detect-private-key": Selector(("text",)),
    "debug-statements": Selector(("python",)),
    BLACK: Selector(types_or=("python", "pyi")),
    FLAKE8: Selector(("python",)),
    "shellcheck": Selector(("shell",)),
    STRICT_MODE: Selector(("shell",), exclude_types=("zsh",)),
    DOCTEST: Selector(types_or=("python", "markdown", "rst")),
}
_FIXERS = {
    "trailing-whitespace": "trailing_whitespace_fixer",
    "end-of-file-fixer": "end_of_file_fixer",
}
_CHECKERS = {
    "check-yaml": "check_yaml",
    "check-toml": "check_toml",
    "detect-private-key": "detect_private_key",
    "debug-statements": "debug_statement_hook",
}


@dataclass
class Measurement:
    debt: Debt = field(default_factory=dict)
    checked: dict[str, int] = field(default_factory=dict)  # tool -> files given
    notes: list[str] = field(default_factory=list)


def repo_files(project: Project) -> list[RepoFile]:
    root = tree.compose(project.config.text, project.name(project.config))
    return tracked_files(project.root, tree.scalar(tree.get(root, "exclude")))


def wired_tools(project: Project) -> list[str]:
    root = tree.compose(project.config.text, project.name(project.config))
    return [tool for tool in SELECTORS if tree.find_hook(root, tool) is not None]


def files_for(tool: str, files: Sequence[RepoFile]) -> list[str]:
    selector = SELECTORS[tool]
    return select(files, selector.types, selector.types_or, selector.exclude_types)


def measure(
    project: Project, only: Mapping[str, Sequence[str]] | None = None
) -> Measurement:
    """Each wired hook's failures today (``only``: just these tools and files)."""
    files = repo_files(project)
    result = Measurement()
    for tool in wired_tools(project):
        if only is not None and tool not in only:
            continue
        selected = files_for(tool, files)
        if only is not None:
            wanted = set(only[tool])
            selected = [path for path in selected if path in wanted]
        selected = _outside_own_exclude(project, tool, selected)
        result.checked[tool] = len(selected)
        if selected:
            failures = _check(tool)(project, selected, result.notes)
            if failures:
                result.debt[tool] = failures
    return result


def _outside_own_exclude(
    project: Project, tool: str, paths: Sequence[str]
) -> list[str]:
    """``paths`` without those the hook's own ``exclude:`` already leaves out."""
    if tool not in HOOK_EXCLUDE_TOOLS:
        return list(paths)
    name = project.name(project.config)
    own = hook_baseline.own_exclude(project.config.text, name, tool)
    if not own:
        return list(paths)
    try:
        pattern = re.compile(own)
    except re.error as error:
        raise ConfigError(
            f"{name}: hook {tool}'s `exclude:` is not a valid regex: {error}"
        ) from None
    return [path for path in paths if not pattern.search(path)]


Check = Callable[[Project, Sequence[str], list], dict]


def _check(tool: str) -> Check:
    if tool in _FIXERS:
        return lambda p, f, n: tools.changed_by_fixer(p.root, f, _FIXERS[tool])
    if tool in _CHECKERS:
        return lambda p, f, n: tools.named_in_output(p.root, f, _CHECKERS[tool])
    return {
        BLACK: lambda p, f, n: tools.black(p.root, f, p.own_force_exclude()),
        FLAKE8: _flake8,
        "shellcheck": lambda p, f, n: tools.shellcheck(p.root, f),
        STRICT_MODE: lambda p, f, n: own_hooks.strict_mode(
            p.root, f, p.own_exclude(STRICT_MODE)
        ),
        DOCTEST: _doctest,
    }[tool]


def _flake8(project: Project, files: Sequence[str], notes: list) -> dict:
    """flake8 under the config as it will be written, minus the baseline."""
    plugins = _additional_dependencies(project, FLAKE8)
    plugins += _additional_dependencies(project, TORCHFIX)  # flake8 with TorchFix
    tools.require_distributions(plugins, FLAKE8)
    descriptor, config = tempfile.mkstemp(prefix="mlsmoke-flake8-", suffix=".cfg")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(project.flake8.text)
        overrides = [
            f"--config={config}",
            "--per-file-ignores=" + " ".join(project.own_per_file_ignores()),
        ]
        return tools.flake8(project.root, files, overrides)
    finally:
        os.unlink(config)


def _additional_dependencies(project: Project, hook_id: str) -> list[str]:
    """The hook's plugins (TorchFix for flake8), which find violations too."""
    root = tree.compose(project.config.text, project.name(project.config))
    listed = tree.get(tree.find_hook(root, hook_id), "additional_dependencies")
    return [tree.scalar(item) or "" for item in getattr(listed, "value", [])]


def _doctest(project: Project, files: Sequence[str], notes: list) -> dict:
    failures, problem = own_hooks.doctest(
        project.root, files, project.own_exclude(DOCTEST)
    )
    if problem:
        notes.append(f"doctest: the examples could not run: {problem}")
    return failures


def shrink(old: Debt, now: Debt) -> Debt:
    """``old`` cut down to what still fails ``now``: a baseline never grows here."""
    shrunk: Debt = {}
    for tool, failures in old.items():
        still = now.get(tool, {})
        kept = {
            path: [code for code in codes if code in still[path]] if codes else []
            for path, codes in failures.items()
            if path in still
        }
        shrunk[tool] = {
            path: codes for path, codes in kept.items() if codes or not failures[path]
        }
    return shrunk
