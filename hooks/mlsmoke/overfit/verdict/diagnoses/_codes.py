"""Give a diagnose function its ``code`` attribute, as the Diagnoser protocol asks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def diagnoser(code: str) -> Callable[[F], F]:
    def mark(function: F) -> F:
        function.code = code  # type: ignore[attr-defined]
        return function

    return mark
