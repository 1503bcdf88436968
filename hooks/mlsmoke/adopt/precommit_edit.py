"""Edits of ``.pre-commit-config.yaml`` that keep every comment, order and style.

Each edit is a pure function of the text: it finds nodes with :mod:`yamltree`, then
inserts or replaces whole lines there, in the file's own indentation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlsmoke.adopt import yamltree as tree
from mlsmoke.adopt.upstream_basics import run_by_basics
from mlsmoke.adopt.standard import (
    FIRST_HOOKS,
    GATE_HOOK,
    HOOK_DASH,
    HOOK_KEY,
    REPO_DASH,
    REPO_KEY,
    Repo,
    ci_reason,
)
from mlsmoke.errors import ConfigError

_COMMENTED_GATE = re.compile(rf"^\s*#\s*- id: {GATE_HOOK}\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Indent:
    dash: int
    key: int


def reindent(lines: Sequence[str], old: Indent, new: Indent) -> list[str]:
    """A sequence item's lines moved from one indentation to another."""
    first = lines[0][old.key :]
    out = [" " * new.dash + "-" + " " * (new.key - new.dash - 1) + first]
    for line in lines[1:]:
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        out.append(" " * max(0, indent - old.key + new.key) + stripped)
    return out


def _insert(text: str, after: int, new_lines: Sequence[str]) -> str:
    lines = text.splitlines()
    lines[after + 1 : after + 1] = new_lines
    return "\n".join(lines) + "\n"


def _item_indent(node: Any, lines: list[str]) -> Indent:
    return Indent(tree.dash_column(node, lines), node.start_mark.column)


def _root(text: str, name: str) -> Any:
    root = tree.compose(text, name)
    if root is None or tree.get(root, "repos") is None:
        text = text.rstrip("\n") + ("\n" if text.strip() else "") + "repos:\n"
        root = tree.compose(text, name)
    return root, text


def add_hooks(text: str, name: str, repo: Repo, leave_out: Sequence[str] = ()) -> str:
    """``text`` with the hooks of ``repo`` that no repo of it has yet (a check that
    its basics hook runs counts as there)."""
    root, text = _root(text, name)
    there = set(leave_out) | run_by_basics(root)
    missing = [
        hook
        for hook in repo.hooks
        if hook.id not in there and tree.find_hook(root, hook.id) is None
    ]
    if not missing:
        return text
    lines = text.splitlines()
    existing = None if repo.runs_first else _repo_to_extend(root, repo.url)
    if existing is not None:
        hooks = tree.get(existing, "hooks")
        if not tree.is_sequence(hooks) or hooks.flow_style or not hooks.value:
            raise ConfigError(
                f"{name}:{existing.start_mark.line + 1}: cannot add hooks to this "
                f"repo's `hooks:`; add {', '.join(h.id for h in missing)} by hand"
            )
        indent = _item_indent(hooks.value[0], lines)
        block = [
            line
            for hook in missing
            for line in reindent(hook.lines, Indent(HOOK_DASH, HOOK_KEY), indent)
        ]
        return _insert(text, tree.last_line(hooks, lines), block)
    return _add_repo(text, name, root, Repo(repo.url, repo.header, tuple(missing)))


def _repo_to_extend(root: Any, url: str) -> Any:
    """The last repo of ``url`` whose hooks may run anywhere: not a repo of the hooks
    that run first."""
    found = None
    for item in tree.repos(root):
        ids = [tree.scalar(tree.get(hook, "id")) for hook in tree.hooks_of(item)]
        if tree.scalar(tree.get(item, "repo")) != url:
            continue
        if not ids or not all(hook_id in FIRST_HOOKS for hook_id in ids):
            found = item
    return found


def _add_repo(text: str, name: str, root: Any, repo: Repo) -> str:
    lines = text.splitlines()
    pair = tree.get_pair(root, "repos")
    seq = pair[1]
    items = list(tree.repos(root))
    repo_indent = (
        _item_indent(items[0], lines) if items else Indent(REPO_DASH, REPO_KEY)
    )
    hook_indent = _hook_indent(items, lines, repo_indent)
    block = reindent(repo.header, Indent(REPO_DASH, REPO_KEY), repo_indent)
    for hook in repo.hooks:
        block += reindent(hook.lines, Indent(HOOK_DASH, HOOK_KEY), hook_indent)
    if tree.is_sequence(seq) and seq.value and not seq.flow_style:
        if repo.runs_first and items:
            return _insert(text, items[0].start_mark.line - 1, block)
        return _insert(text, tree.last_line(seq, lines), block)
    if tree.scalar(seq) not in (None, "") and not tree.is_sequence(seq):
        raise ConfigError(f"{name}:{seq.start_mark.line + 1}: `repos:` is not a list")
    if tree.is_sequence(seq) and seq.value:
        raise ConfigError(
            f"{name}:{seq.start_mark.line + 1}: `repos:` is a flow list; "
            "write it as a block list first"
        )
    key_line = pair[0].start_mark.line
    lines[key_line] = lines[key_line][: pair[0].start_mark.column] + "repos:"
    return _insert("\n".join(lines) + "\n", key_line, block)


def _hook_indent(items: list[Any], lines: list[str], repo_indent: Indent) -> Indent:
    """Hooks of a new repo sit where the file's other repos put theirs."""
    for item in items:
        hooks = tree.hooks_of(item)
        if hooks:
            found = _item_indent(hooks[0], lines)
            shift = repo_indent.key - item.start_mark.column
            return Indent(found.dash + shift, found.key + shift)
    return Indent(repo_indent.key + 2, repo_indent.key + 4)


def add_gate_comment(text: str, name: str, comment: Sequence[str]) -> str:
    """``comment`` (the commented-out overfit-batch hook) after mlsmoke's hooks."""
    if _COMMENTED_GATE.search(text):
        return text
    root = tree.compose(text, name)
    anchor = tree.find_hook(root, "doctest") or tree.find_hook(root, "bash-strict-mode")
    if anchor is None:
        return text
    lines = text.splitlines()
    indent = _item_indent(anchor, lines)
    block = [" " * indent.dash + line for line in comment]
    parent = next(
        tree.get(repo, "hooks")
        for repo in tree.repos(root)
        if anchor in tree.hooks_of(repo)
    )
    return _insert(text, tree.last_line(parent, lines), block)


def ensure_ci_skip(text: str, name: str, skip: Sequence[str]) -> str:
    """A ``ci:`` block whose ``skip`` names ``skip``, with the reason above it."""
    root = tree.compose(text, name)
    lines = text.splitlines()
    ci = tree.get(root, "ci")
    if ci is None:
        block = ["", "ci:"] + ["  " + line for line in ci_reason()]
        block.append(f"  skip: [{', '.join(skip)}]")
        return _insert(text, len(lines) - 1, block)
    if not tree.is_mapping(ci) or ci.flow_style or not ci.value:
        raise ConfigError(
            f"{name}:{ci.start_mark.line + 1}: `ci:` is not a block mapping; "
            f"add `skip: [{', '.join(skip)}]` to it by hand"
        )
    pair = tree.get_pair(ci, "skip")
    column = ci.value[0][0].start_mark.column
    if pair is None:
        block = [" " * column + line for line in ci_reason()]
        block.append(" " * column + f"skip: [{', '.join(skip)}]")
        return _insert(text, tree.last_line(ci, lines), block)
    value = pair[1]
    have = [tree.scalar(item) for item in getattr(value, "value", [])]
    missing = [hook for hook in skip if hook not in have]
    if not missing or not tree.is_sequence(value):
        return text
    if value.flow_style:
        line = value.start_mark.line
        if value.end_mark.line != line:
            raise ConfigError(f"{name}:{line + 1}: add {', '.join(missing)} to skip")
        lines[line] = (
            lines[line][: value.start_mark.column]
            + f"[{', '.join([*have, *missing])}]"
            + lines[line][value.end_mark.column :]
        )
        return "\n".join(lines) + "\n"
    indent = _item_indent(value.value[0], lines)
    block = [
        " " * indent.dash + "-" + " " * (indent.key - indent.dash - 1) + hook
        for hook in missing
    ]
    return _insert(text, tree.last_line(value, lines), block)
