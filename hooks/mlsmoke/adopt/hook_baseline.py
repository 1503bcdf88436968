"""A hook's baseline: the files in its ``exclude:`` regex in .pre-commit-config.yaml.

Written as pre-commit documents multi-line excludes::

    # mlsmoke baseline: ...
    exclude: |
      (?x)^(
        scripts/old\\.sh|
        tools/build\\.sh
      )$
"""

from __future__ import annotations

from collections.abc import Sequence

from mlsmoke.adopt import marks, regexlist
from mlsmoke.adopt import yamltree as tree
from mlsmoke.errors import ConfigError


def exclude_lines(paths: Sequence[str], column: int) -> list[str]:
    pad = " " * column
    comment = [pad + line for line in marks.comment("files that failed this hook")]
    regex = [f"{pad}  {line}" for line in regexlist.to_regex(paths)]
    return [*comment, f"{pad}exclude: |", *regex]


def _marker_start(lines: list[str], key_line: int) -> int | None:
    line = key_line - 1
    while line >= 0 and lines[line].lstrip().startswith("#"):
        if marks.is_marker(lines[line]):
            return line
        line -= 1
    return None


def read(text: str, name: str, hook_id: str) -> list[str] | None:
    """The baselined paths of a hook; None when it has no mlsmoke baseline."""
    root = tree.compose(text, name)
    pair = tree.get_pair(tree.find_hook(root, hook_id), "exclude")
    if pair is None:
        return None
    if _marker_start(text.splitlines(), pair[0].start_mark.line) is None:
        return None
    return regexlist.from_regex(tree.scalar(pair[1]) or "")


def write(text: str, name: str, hook_id: str, paths: Sequence[str]) -> str:
    """``text`` with the hook's baseline holding exactly ``paths`` (none: removed)."""
    root = tree.compose(text, name)
    hook = tree.find_hook(root, hook_id)
    if hook is None:
        return text
    lines = text.splitlines()
    pair = tree.get_pair(hook, "exclude")
    if pair is not None:
        start = _marker_start(lines, pair[0].start_mark.line)
        if start is None:
            raise ConfigError(
                f"{name}:{pair[0].start_mark.line + 1}: hook {hook_id} has its own "
                "`exclude:`; mlsmoke init leaves it alone and cannot baseline it"
            )
        del lines[start : tree.last_line(pair[1], lines) + 1]
        text = "\n".join(lines) + "\n"
        if not paths:
            return text
        root = tree.compose(text, name)
        hook = tree.find_hook(root, hook_id)
        lines = text.splitlines()
    if not paths:
        return text
    block = exclude_lines(paths, hook.start_mark.column)
    lines[tree.last_line(hook, lines) + 1 : tree.last_line(hook, lines) + 1] = block
    return "\n".join(lines) + "\n"
