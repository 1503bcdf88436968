"""Names in Python source as ``ast`` reads them: ``a.b.c``, its last part, and the
one name a statement assigns."""

from __future__ import annotations

import ast


def dotted(node: ast.expr | None, unknown: str = "") -> str:
    """``torch.optim.AdamW`` for that attribute chain; ``unknown`` stands for a part
    that is no name (a call, a subscript)."""
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value, unknown)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else unknown


def last(node: ast.expr | None) -> str:
    """``AdamW`` for ``torch.optim.AdamW``; "" for what is no name."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def assigned(node: ast.stmt) -> tuple[str, ast.expr] | None:
    """The name and value of ``name = value`` or ``name: T = value``; None for any
    other statement (several targets, unpacking, an attribute, no value)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    return (target.id, value) if isinstance(target, ast.Name) else None
