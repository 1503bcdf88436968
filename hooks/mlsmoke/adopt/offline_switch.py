"""``init --offline`` and ``init --online`` on an adopted repository: its hook repos
from GitHub become ``repo: local`` hooks installed from the package index, and back.

Pure functions of the config's text. Only the ``repos:`` items of the third-party
repositories in :data:`mlsmoke.offline_hooks.UPSTREAMS` (the ones mlsmoke writes) and
mlsmoke's own repo change, and in them only the lines of the keys that differ
between the two forms: ``repo:``, ``rev:``, and each hook's ``name``, ``language``,
manifest keys and ``additional_dependencies``. Every other line (the user's hooks,
comments, order, other repos, a baseline's ``exclude:``) stays byte for byte, so
``--offline`` then ``--online`` gives back the file ``init`` wrote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mlsmoke.adopt import yamltree as tree
from mlsmoke.hook_repos import HOOK_REPOS
from mlsmoke.offline_hooks import (
    HEADER,
    UPSTREAMS,
    flow_value,
    is_mlsmoke,
    local_hooks,
)

_VERSION = re.compile(r"^v?\d+(\.\d+)*$")
_PINNED = re.compile(r"^(?P<package>[\w.-]+)==(?P<version>\S+)$")
# Keys an offline hook has for pre-commit's sake, not the user's.
_LOCAL_KEYS = ("id", "name", "language", "additional_dependencies")

Edit = tuple[int, int, list[str]]  # lines first..last (0-based) become these


@dataclass
class Conversion:
    """The converted text, the repos converted and those that could not be, why."""

    text: str
    converted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def form(text: str, name: str) -> tuple[int, int]:
    """How many hook repos are online (from GitHub) and offline (from the index)."""
    online = offline = 0
    for _node, value in _items(text, name):
        if value.get("repo") in UPSTREAMS:
            online += 1
        elif _upstream_of(value) is not None:
            offline += 1
    return online, offline


def to_offline(text: str, name: str, hook_repo: str, rev: str) -> Conversion:
    """``text`` with its GitHub hook repos as ``repo: local`` hooks at the same
    versions, and mlsmoke's hooks from ``hook_repo`` at ``rev``."""
    result = Conversion(text)
    edits: list[Edit] = []
    lines = text.splitlines()
    for node, value in _items(text, name):
        url = value.get("repo")
        if is_mlsmoke(value) and not _is_local_path(str(url)):
            edits += _set_scalar(node, "repo", hook_repo, lines)
            edits += _set_scalar(node, "rev", rev, lines)
            result.converted.append(f"mlsmoke's hooks: {url} -> {hook_repo}")
            continue
        if url not in UPSTREAMS:
            continue
        why = _why_not_offline(value, node)
        if why:
            result.kept.append(f"{url}: {why}")
            continue
        local = local_hooks(value)["hooks"]
        edits += _set_scalar(node, "repo", "local", lines)
        edits += _drop_key(node, "rev", lines)
        for hook_node, hook, want in zip(tree.hooks_of(node), value["hooks"], local):
            added = {k: v for k, v in want.items() if k not in hook}
            edits += _add_keys(hook_node, "id", added, lines)
            if "additional_dependencies" in hook:
                deps = want["additional_dependencies"]
                edits += _set_list(hook_node, "additional_dependencies", deps, lines)
        result.converted.append(str(url))
    result.text = _apply(text, edits)
    if result.converted and HEADER.splitlines()[0] not in result.text:
        result.text = _with_header(result.text, name)
    return result


def to_online(text: str, name: str) -> Conversion:
    """``text`` with its ``repo: local`` hooks of a known upstream back as that
    upstream's repo at the tag of the pinned version."""
    result = Conversion(text)
    edits: list[Edit] = []
    lines = text.splitlines()
    for node, value in _items(text, name):
        url = _upstream_of(value)
        if url is None or len(tree.hooks_of(node)) != len(value["hooks"]):
            continue
        repo = upstream_repo(value, url)
        edits += _set_scalar(node, "repo", url, lines)
        edits += _add_keys(node, "repo", {"rev": repo["rev"]}, lines)
        hooks = zip(tree.hooks_of(node), value["hooks"], repo["hooks"])
        for hook_node, hook, want in hooks:
            for key in hook:
                if key not in want:
                    edits += _drop_key(hook_node, key, lines)
            if "additional_dependencies" in want:
                plugins = want["additional_dependencies"]
                edits += _set_list(hook_node, "additional_dependencies", plugins, lines)
        result.converted.append(url)
    result.text = _without_header(_apply(text, edits))
    return result


def upstream_repo(local: dict[str, Any], url: str) -> dict[str, Any]:
    """A ``repo: local`` entry of offline hooks as its upstream repo again: each
    hook's own options kept, what the upstream's manifest says left out."""
    manifest = UPSTREAMS[url].hooks
    version = ""
    hooks = []
    for hook in local["hooks"]:
        requirement, *plugins = hook["additional_dependencies"]
        version = _PINNED.match(requirement)["version"]
        entry = {"id": hook["id"]}
        if hook.get("name", hook["id"]) != hook["id"]:
            entry["name"] = hook["name"]
        entry.update(
            (key, value)
            for key, value in hook.items()
            if key not in _LOCAL_KEYS and manifest[hook["id"]].get(key) != value
        )
        if plugins:
            entry["additional_dependencies"] = plugins
        hooks.append(entry)
    return {"repo": url, "rev": _tag(url, version), "hooks": hooks}


def _tag(url: str, version: str) -> str:
    """The upstream's tag for a PyPI version: as the pinned rev spells its tags."""
    pinned = [entry["rev"] for entry in HOOK_REPOS.values() if entry["repo"] == url]
    prefix = "v" if pinned and str(pinned[0]).startswith("v") else ""
    return prefix + version


def _upstream_of(value: dict[str, Any]) -> str | None:
    """The upstream whose offline hooks ``value`` (a ``repo: local`` entry) holds."""
    if value.get("repo") != "local" or not value.get("hooks"):
        return None
    found = set()
    for hook in value["hooks"]:
        if not isinstance(hook, dict) or hook.get("language") != "python":
            return None
        deps = hook.get("additional_dependencies")
        if not isinstance(deps, list) or not deps:
            return None
        pinned = _PINNED.match(str(deps[0]))
        if pinned is None:
            return None
        for url, upstream in UPSTREAMS.items():
            if upstream.package == pinned["package"] and hook["id"] in upstream.hooks:
                found.add((url, pinned["version"]))
    return next(iter(found))[0] if len(found) == 1 else None


def _why_not_offline(value: dict[str, Any], node: Any) -> str:
    upstream = UPSTREAMS[value["repo"]]
    hooks = value.get("hooks")
    if not isinstance(hooks, list) or len(tree.hooks_of(node)) != len(hooks):
        return "its `hooks:` is not a block list of mappings; it still needs GitHub"
    if any(hook_node.flow_style for hook_node in tree.hooks_of(node)):
        return "its hooks are flow mappings; it still needs GitHub"
    unknown = [
        str(hook.get("id")) for hook in hooks if hook.get("id") not in upstream.hooks
    ]
    if unknown:
        return f"no offline form for hook {', '.join(unknown)}; it still needs GitHub"
    rev = str(value.get("rev", ""))
    if not _VERSION.match(rev):
        return f"rev {rev!r} is not a release tag; it still needs GitHub"
    return ""


def _set_scalar(node: Any, key: str, value: str, lines: list[str]) -> list[Edit]:
    """The one-line scalar under ``key`` replaced by ``value``, the rest of its line
    (a comment after it) kept."""
    scalar = tree.get(node, key)
    if scalar is None or scalar.start_mark.line != scalar.end_mark.line:
        return []
    at = scalar.start_mark.line
    line = lines[at]
    start, end = scalar.start_mark.column, scalar.end_mark.column
    return [(at, at, [line[:start] + flow_value(value) + line[end:]])]


def _drop_key(node: Any, key: str, lines: list[str]) -> list[Edit]:
    pair = tree.get_pair(node, key)
    if pair is None or pair[0].start_mark.line == node.start_mark.line:
        return []  # absent, or the item's first key, on the line of its dash
    return [(pair[0].start_mark.line, tree.last_line(pair[1], lines), [])]


def _set_list(node: Any, key: str, values: list[str], lines: list[str]) -> list[Edit]:
    """``key``'s value as a flow list of ``values``, on the key's line."""
    pair = tree.get_pair(node, key)
    if pair is None:
        return []
    first = pair[0].start_mark.line
    head = lines[first][: pair[0].start_mark.column]
    new = f"{head}{key}: {flow_value(values)}"
    return [(first, tree.last_line(pair[1], lines), [new])]


def _add_keys(
    node: Any, after: str, added: dict[str, Any], lines: list[str]
) -> list[Edit]:
    """``added`` as ``key: value`` lines after the key ``after``, in its column."""
    pair = tree.get_pair(node, after)
    if pair is None or not added:
        return []
    at = tree.last_line(pair[1], lines) + 1
    column = " " * pair[0].start_mark.column
    return [(at, at - 1, [f"{column}{k}: {flow_value(v)}" for k, v in added.items()])]


def _is_local_path(url: str) -> bool:
    return os.path.isabs(url) or url.startswith("file://")


def _items(text: str, name: str) -> list[tuple[Any, dict[str, Any]]]:
    """Each ``repos:`` item's node beside its value, block items only."""
    import yaml

    root = tree.compose(text, name)
    if root is None:
        return []
    nodes = tree.get(root, "repos")
    values = (yaml.safe_load(text) or {}).get("repos")
    if not tree.is_sequence(nodes) or nodes.flow_style or not isinstance(values, list):
        return []
    return [
        (node, value)
        for node, value in zip(nodes.value, values)
        if tree.is_mapping(node) and not node.flow_style and isinstance(value, dict)
    ]


def _apply(text: str, edits: Sequence[Edit]) -> str:
    if not edits:
        return text
    lines = text.splitlines()
    for first, last, block in sorted(edits, reverse=True):
        lines[first : last + 1] = block
    return "\n".join(lines) + "\n"


def _with_header(text: str, name: str) -> str:
    """HEADER above the first ``repos:`` item, at its indentation."""
    root = tree.compose(text, name)
    first = next(iter(tree.repos(root)))
    lines = text.splitlines()
    indent = " " * tree.dash_column(first, lines)
    at = first.start_mark.line
    lines[at:at] = [indent + line for line in HEADER.splitlines()]
    return "\n".join(lines) + "\n"


def _without_header(text: str) -> str:
    header = HEADER.splitlines()
    lines = text.splitlines()
    for i in range(len(lines) - len(header) + 1):
        if [line.strip() for line in lines[i : i + len(header)]] == header:
            del lines[i : i + len(header)]
            return "\n".join(lines) + "\n"
    return text
