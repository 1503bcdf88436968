"""Whether the project's callables can be called as the gate calls them: the model and
batch callables with no arguments, the loss with ``(model, batch)``.

A callable that needs more raises TypeError at the call itself, before any of its own
code runs; that is the configuration's problem (the key names the wrong thing, or a
class that takes arguments), not the project's training. Read from the signature,
so that a TypeError raised deeper, inside the callable's own code, stays the
project's error.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

# How the gate calls each callable: the arguments, by name, for messages.
CALLED_WITH = {"model": (), "batch": (), "loss": ("model", "batch")}


def unbound_call(key: str, callable_: Callable[..., Any]) -> str | None:
    """Why ``callable_`` cannot be called as the gate calls ``key``, with its
    signature; None when it can, or when its signature cannot be read."""
    arguments = CALLED_WITH.get(key)
    if arguments is None:
        return None
    try:
        signature = inspect.signature(callable_)
    except (TypeError, ValueError):  # a builtin or an extension type: no signature
        return None
    try:
        signature.bind(*arguments)
    except TypeError as error:
        name = getattr(callable_, "__name__", None) or type(callable_).__name__
        called = f"{name}({', '.join(arguments)})"
        return (
            f"{name}{_plain(signature)} cannot be called as the gate calls it,"
            f" {called}: {error}; point {key} at a callable that takes"
            f" {_takes(arguments)}, e.g. a function that builds it with the arguments"
            " it needs"
        )
    return None


def _plain(signature: inspect.Signature) -> inspect.Signature:
    """The signature without annotations: the names and defaults a caller needs."""
    empty = inspect.Parameter.empty
    return signature.replace(
        parameters=[p.replace(annotation=empty) for p in signature.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )


def _takes(arguments: tuple[str, ...]) -> str:
    return f"({', '.join(arguments)})" if arguments else "no arguments"
