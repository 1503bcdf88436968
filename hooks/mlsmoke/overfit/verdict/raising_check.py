"""The comparison a project's own check made before it raised, read from the frame
that raised: ``if int(labels.max()) >= self.num_classes: raise ValueError(...)``, or
``assert labels.max().item() < n``. Python numbers leave no trace in torch, so the
test of the ``if`` (or ``assert``) around the raising line is read from the source,
and its comparisons are evaluated from that frame's own locals: one side reads the
values of a tensor the frame holds (not its shape or length), the other is a number
(a constant, a name, an attribute such as ``self.head.out_features``).

Only names, attributes, constant subscripts and plain arithmetic are evaluated; no
call other than ``len`` and ``int`` runs, and no property is read.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import operator
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any, NamedTuple

import torch

from mlsmoke.overfit.verdict import project_frames

# The attributes and calls that read a tensor's shape, not its values.
_SHAPE_ATTRIBUTES = {"shape", "ndim", "dtype", "device", "T"}
_SHAPE_CALLS = {"len", "size", "dim", "numel", "ndimension", "nelement"}
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
}
_CALLS: dict[str, Callable[[Any], Any]] = {"len": len, "int": int}


class Compared(NamedTuple):
    """A tensor the raising frame held whose values its check compared with
    ``number``."""

    tensor: torch.Tensor
    number: float


def comparisons(error: BaseException) -> list[Compared]:
    """What the check that raised ``error`` compared, in the innermost frame of the
    project's code it was raised through; none when that frame's raising line is in
    no ``if`` or ``assert`` that compares."""
    frame, line = _raising_frame(error)
    if frame is None:
        return []
    test = _test_around(frame.f_code.co_filename, line)
    if test is None:
        return []
    scope = _Scope(frame)
    found: list[Compared] = []
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for left, right in zip(operands, operands[1:]):
                found += _compared(left, right, scope) + _compared(right, left, scope)
    return found


def _raising_frame(error: BaseException) -> tuple[FrameType | None, int]:
    libraries = project_frames.library_directories()
    tb: TracebackType | None = error.__traceback__
    found: tuple[FrameType | None, int] = (None, 0)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if project_frames.is_project_file(filename, libraries):
            found = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _test_around(filename: str, line: int) -> ast.expr | None:
    """The test of the innermost ``if`` whose body raises at ``line``, or of the
    ``assert`` at it."""
    best: tuple[int, ast.expr] | None = None
    for node in ast.walk(_module(filename)):
        if isinstance(node, ast.Assert) and _spans(node, line):
            return node.test
        if isinstance(node, ast.If) and any(
            isinstance(stmt, ast.Raise) and _spans(stmt, line) for stmt in node.body
        ):
            if best is None or node.lineno > best[0]:
                best = (node.lineno, node.test)
    return None if best is None else best[1]


@functools.lru_cache(maxsize=32)
def _module(filename: str) -> ast.AST:
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def _spans(node: ast.stmt, line: int) -> bool:
    end = node.end_lineno if node.end_lineno is not None else node.lineno
    return node.lineno <= line <= end


def _compared(values: ast.expr, number: ast.expr, scope: _Scope) -> list[Compared]:
    tensors = list(_tensors_read(values, scope))
    if not tensors:
        return []
    found = scope.evaluate(number)
    if isinstance(found, torch.Tensor):
        if found.numel() != 1 or found.is_floating_point():
            return []
        found = found.item()
    if isinstance(found, bool) or not isinstance(found, (int, float)):
        return []
    return [Compared(tensor, found) for tensor in tensors]


def _tensors_read(node: ast.AST, scope: _Scope) -> Iterator[torch.Tensor]:
    """The tensors whose values ``node`` reads: names, attributes and subscripts
    that hold a tensor, outside a read of a shape (``len(y)``, ``y.shape[0]``)."""
    if isinstance(node, ast.Attribute) and node.attr in _SHAPE_ATTRIBUTES:
        return
    if isinstance(node, ast.Call) and _called_name(node) in _SHAPE_CALLS:
        return
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        value = scope.evaluate(node)
        if isinstance(value, torch.Tensor):
            yield value
            return
    for child in ast.iter_child_nodes(node):
        yield from _tensors_read(child, scope)


def _called_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


class _Scope:
    """Evaluates a few kinds of expression in a frame's names; None for others."""

    _MISSING = object()

    def __init__(self, frame: FrameType) -> None:
        self.names = {**frame.f_globals, **frame.f_locals}

    def evaluate(self, node: ast.AST) -> Any:
        try:
            return self._evaluate(node)
        except Exception:
            return None

    def _evaluate(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.names[node.id]
        if isinstance(node, ast.Attribute):
            return _attribute(self._evaluate(node.value), node.attr)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            base = self._evaluate(node.value)
            if isinstance(base, (dict, list, tuple)):
                return base[node.slice.value]
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            left, right = self._evaluate(node.left), self._evaluate(node.right)
            if all(_is_number(v) for v in (left, right)):
                return _ARITHMETIC[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self._evaluate(node.operand)
            if _is_number(value):
                return -value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _CALLS and len(node.args) == 1 and not node.keywords:
                value = self._evaluate(node.args[0])
                if not isinstance(value, torch.Tensor):
                    return _CALLS[node.func.id](value)
        raise ValueError("not evaluated")


def _attribute(base: Any, name: str) -> Any:
    """``base.name``, unless a property (code) would compute it."""
    if isinstance(inspect.getattr_static(type(base), name, None), property):
        raise ValueError("a property is code")
    return getattr(base, name)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
