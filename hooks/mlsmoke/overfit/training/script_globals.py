"""Values the gate gives a script's module-level assignments (``globals`` in
[tool.mlsmoke.overfit]): for a script that sets its sizes in its source, as
``batch_size = 64`` at its top, and reads no arguments that could change them.

The script's own lines stay where they are; only the value each assignment of a
named global gives is replaced, so that line numbers, tracebacks and the rest of
the script are the project's own."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from typing import Any

from mlsmoke.ast_names import assigned

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
OUT_DIR = "{out_dir}"  # as in args: the directory the gate provides
OUT_DIR_VARIABLE = "MLSMOKE_OUT_DIR"  # where the script's process finds it


def give_globals(tree: ast.Module, values: dict[str, Any]) -> list[str]:
    """Give every module-level ``name = ...`` (or ``name: T = ...``) of a name in
    ``values`` that value, in ``tree``; the names no such assignment sets."""
    found: set[str] = set()
    for node in _module_level(tree.body):
        name = _assigned_name(node)
        if name in values:
            node.value = ast.copy_location(_literal(values[name]), node.value)
            found.add(name)
    ast.fix_missing_locations(tree)
    return [name for name in values if name not in found]


def assigned_names(path: str) -> list[str]:
    """The names the script at ``path`` assigns at module level, in order of first
    assignment, that ``globals`` can give values; [] when it cannot be read."""
    try:
        with open(path, "rb") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return []
    names = map(_assigned_name, _module_level(tree.body))
    return list(dict.fromkeys(name for name in names if name is not None))


def described(values: dict[str, Any]) -> str:
    """``batch_size = 4, eval_iters = 2``, as the script would read them."""
    return ", ".join(f"{name} = {value!r}" for name, value in values.items())


def valid_value(value: Any) -> bool:
    """Whether ``value`` is one a script's source can hold as a literal: a string,
    a whole or finite number, a boolean, or a list or table of them."""
    if isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(map(valid_value, value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and valid_value(v) for k, v in value.items())
    return False


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements the module runs itself: its own, and those in its if, try,
    with, for and while blocks, not those of a function or class."""
    for node in body:
        yield node
        if isinstance(node, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _module_level(handler.body)


def _assigned_name(node: ast.stmt) -> str | None:
    found = assigned(node)
    return None if found is None else found[0]


def _literal(value: Any) -> ast.expr:
    """``value`` as the script's source would write it; ``{out_dir}`` in a string,
    as in args, is the directory the gate provides (read when the line runs)."""
    if isinstance(value, str) and OUT_DIR in value:
        parts = repr(value.split(OUT_DIR))
        text = f'__import__("os").environ["{OUT_DIR_VARIABLE}"].join({parts})'
        return ast.parse(text, mode="eval").body
    return ast.parse(repr(value), mode="eval").body
