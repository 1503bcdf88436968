"""Where a training script sets its learning rate, for the lr hints: the script's own
assignment of that value (``train.py:41 (learning_rate = 6e-07)``), the value
``globals`` gives it (``globals of train.py (learning_rate = 6e-07)``), the argument
that overrides it (``args of train.py (--learning_rate=6e-07)``), or an argument
parser's default (``train.py:12 (--lr default 1e-07)``)."""

from __future__ import annotations

import ast
import math
import re
from typing import TYPE_CHECKING

from mlsmoke.ast_names import assigned, dotted

if TYPE_CHECKING:
    from mlsmoke.overfit.training.script_process import Script

_LR_NAME = re.compile(r"^(lr|learning_rate|base_lr|.*_lr)$", re.IGNORECASE)


def lr_origin(script: Script, lr: float) -> str:
    """Where ``lr`` is set in ``script`` or its args; "" when neither says."""
    if lr <= 0:
        return ""
    for name, value in script.globals.items():
        number = _number(str(value)) if _LR_NAME.match(name) else None
        if number is not None and math.isclose(number, lr, rel_tol=1e-9):
            return f"globals of {script.path} ({name} = {value!r})"
    try:
        tree = ast.parse(script.file.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ""
    for name, line, value in script_constants(tree):
        if not math.isclose(value, lr, rel_tol=1e-9):
            continue
        return f"{script.path}:{line} ({name} = {value:g})"
    for name, line, value in lr_settings(tree):
        if math.isclose(value, lr, rel_tol=1e-9):
            return f"{script.path}:{line} ({name} = {value:g})"
    for arg in script.args:
        name, _, value = arg.lstrip("-").partition("=")
        if _number(value) is not None and math.isclose(_number(value), lr):
            return f"args of {script.path} ({arg})"
    for option, line, value in argument_defaults(tree):
        if math.isclose(value, lr, rel_tol=1e-9):
            return f"{script.path}:{line} ({option} default {value:g})"
    return ""


def argument_defaults(tree: ast.Module) -> list[tuple[str, int, float]]:
    """``parser.add_argument("--lr", default=<number>)`` calls anywhere in the
    script: the option, its line, the default."""
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            continue
        for keyword in node.keywords:
            if keyword.arg == "default":
                number = _literal_number(keyword.value)
                if number is not None:
                    found.append((node.args[0].value, node.lineno, number))
    return found


def script_constants(tree: ast.Module) -> list[tuple[str, int, float]]:
    """The script's top-level ``name = <number>`` assignments: name, line, value."""
    found = []
    for node in tree.body:
        name, value = assigned(node) or ("", None)
        number = _literal_number(value) if value is not None else None
        if number is not None:
            found.append((name, node.lineno, number))
    return found


def lr_settings(tree: ast.Module) -> list[tuple[str, int, float]]:
    """Assignments of a number to an lr anywhere in the script, a config object's
    attribute included (``C.trainer.learning_rate = 5e-4`` inside ``get_config()``):
    the dotted name, its line, the value."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        name = dotted(node.targets[0], "?")
        number = _literal_number(node.value)
        if number is not None and _LR_NAME.search(name.rpartition(".")[2]):
            found.append((name, node.lineno, number))
    return found


def _literal_number(node: ast.expr) -> float | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
