"""Names in Python source as ``ast`` reads them: ``a.b.c``, and its last part."""

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
