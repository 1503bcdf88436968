"""Where things are in a ``.pre-commit-config.yaml``: nodes with their line numbers.

PyYAML's composer gives every node its start and end; the editors insert and replace
whole lines at those positions, so comments, order and style stay as they were.
PyYAML comes with pre-commit, which ``mlsmoke init`` needs anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mlsmoke.errors import ConfigError, EnvironmentProblem
from mlsmoke.install_hint import install_hint


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise EnvironmentProblem(
            ".pre-commit-config.yaml is read with PyYAML, which comes with "
            f"pre-commit: {install_hint('init')}"
        ) from None
    return yaml


def compose(text: str, name: str) -> Any:
    """The root node of ``text``; a YAML error names its line."""
    yaml = _yaml()
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(
            f"{name}{line}: not valid YAML: {error.problem}; nothing was written"
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{name}: not valid YAML: {error}; nothing was written")
    if node is None:
        return None
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"{name}:{node.start_mark.line + 1}: expected a mapping with `repos:`"
        )
    return node


def is_mapping(node: Any) -> bool:
    return type(node).__name__ == "MappingNode"


def is_sequence(node: Any) -> bool:
    return type(node).__name__ == "SequenceNode"


def get(node: Any, key: str) -> Any:
    """The value node under ``key`` of a mapping node, else None."""
    pair = get_pair(node, key)
    return pair[1] if pair else None


def get_pair(node: Any, key: str) -> tuple[Any, Any] | None:
    if not is_mapping(node):
        return None
    for key_node, value in node.value:
        if getattr(key_node, "value", None) == key:
            return key_node, value
    return None


def scalar(node: Any) -> str | None:
    value = getattr(node, "value", None)
    return value if isinstance(value, str) else None


def last_line(node: Any, lines: list[str]) -> int:
    """The 0-based last line a node's text takes, trailing blank lines left out."""
    if (is_mapping(node) or is_sequence(node)) and node.value and not node.flow_style:
        last = node.value[-1]
        return last_line(last[1] if is_mapping(node) else last, lines)
    end = node.end_mark
    line = end.line if end.column > 0 else end.line - 1
    while line > node.start_mark.line and not lines[line].strip():
        line -= 1
    return max(line, node.start_mark.line)


def dash_column(node: Any, lines: list[str]) -> int:
    """The column of the ``-`` before a block sequence item."""
    line = lines[node.start_mark.line][: node.start_mark.column].rstrip()
    if line.endswith("-"):
        return len(line) - 1
    return max(node.start_mark.column - 2, 0)


def repos(root: Any) -> Iterator[Any]:
    node = get(root, "repos")
    if is_sequence(node):
        yield from (item for item in node.value if is_mapping(item))


def hooks_of(repo: Any) -> list[Any]:
    node = get(repo, "hooks")
    return (
        [hook for hook in node.value if is_mapping(hook)] if is_sequence(node) else []
    )


def find_hook(root: Any, hook_id: str) -> Any:
    for repo in repos(root):
        for hook in hooks_of(repo):
            if scalar(get(hook, "id")) == hook_id:
                return hook
    return None


def find_repo(root: Any, url: str) -> Any:
    for repo in repos(root):
        if scalar(get(repo, "repo")) == url:
            return repo
    return None
