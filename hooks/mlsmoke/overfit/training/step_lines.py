"""Lines of the project's step function: where a call happened (read off the stack)
and where a call is written (read off its source), as ``file:line: text``."""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import torch

import mlsmoke

_SKIPPED_DIRS = (Path(torch.__file__).parent, Path(mlsmoke.__file__).parent)


def located(filename: str, lineno: int) -> str:
    """``file:line: text``, the file relative to the project root (the working
    directory) when it is inside it."""
    text = linecache.getline(filename, lineno).strip()
    shown = filename
    try:
        shown = str(Path(filename).resolve().relative_to(Path.cwd()))
    except (OSError, ValueError):
        pass
    return f"{shown}:{lineno}: {text}" if text else f"{shown}:{lineno}"


def calling_line(code: CodeType | None) -> str | None:
    """The line of the step function (``code``) the current call came from; else the
    innermost line of the project's code on the stack."""
    frame: FrameType | None = sys._getframe(1)
    fallback = None
    while frame is not None:
        if code is not None and frame.f_code is code:
            return located(frame.f_code.co_filename, frame.f_lineno)
        if fallback is None and not _skipped(frame.f_code.co_filename):
            fallback = located(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return fallback


def raising_line(error: BaseException, code: CodeType | None) -> str | None:
    """The step function's line ``error`` passed through, innermost."""
    found = None
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code is code:
            found = located(code.co_filename, traceback.tb_lineno)
        traceback = traceback.tb_next
    return found


def _skipped(filename: str) -> bool:
    if filename.startswith("<"):
        return True
    try:
        path = Path(filename).resolve()
    except OSError:
        return True
    return any(path.is_relative_to(directory) for directory in _SKIPPED_DIRS)


def call_lines(function: Callable[..., Any], names: tuple[str, ...]) -> list[str]:
    """The lines of ``function``'s source that call a name or method in ``names``
    (``loss.backward()``, ``clip_grad_norm_(...)``), in source order."""
    try:
        lines, first = inspect.getsourcelines(inspect.unwrap(function))
        filename = inspect.getsourcefile(inspect.unwrap(function)) or "?"
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node.func) in names:
            found.append(node.lineno + first - 1)
    return [located(filename, lineno) for lineno in sorted(set(found))]


def first_body_line(function: Callable[..., Any]) -> str | None:
    """The first statement of ``function``'s body: where a call that belongs at the
    top goes."""
    try:
        lines, first = inspect.getsourcelines(inspect.unwrap(function))
        filename = inspect.getsourcefile(inspect.unwrap(function)) or "?"
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = definition.body
    start = body[1] if len(body) > 1 and _is_docstring(body[0]) else body[0]
    return located(filename, start.lineno + first - 1)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _called_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None
