"""The project's training routines: functions and methods that build an optimizer
and call ``backward()`` and ``step()`` in a loop, wherever they are defined.

A script that builds a project ``Trainer`` and calls its ``run()`` trains as surely as
one that holds the loop itself (minGPT-style projects keep the loop in a library
module). Found by reading the source; nothing is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mlsmoke.ast_names import last


@dataclass(frozen=True)
class Routine:
    path: str  # the file that defines it
    owner: str | None  # its class, None for a module-level function
    name: str
    why: str  # "builds ... (line 61); backward() and step() in the loop at line 81"

    def qualname(self) -> str:
        return f"{self.owner}.{self.name}" if self.owner else self.name


def find(
    trees: Mapping[str, ast.Module], trains: Callable[[ast.AST], str | None]
) -> list[Routine]:
    """Every module-level function and method among ``trees`` (path -> module) for
    which ``trains`` (a function's node -> why, or None) says it trains."""
    found = []
    for path, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found += _routine(path, None, node, trains)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        found += _routine(path, node.name, item, trains)
    return found


def _routine(path, owner, node, trains) -> list[Routine]:
    why = trains(node)
    return [] if why is None else [Routine(path, owner, node.name, why)]


def called_by(tree: ast.Module, routines: list[Routine]) -> Routine | None:
    """The routine ``tree`` runs: a function it calls by name, or a method it calls
    on an instance of the class it builds (``Trainer(...)`` then ``.run()``)."""
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    own = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    names = {last(func) for func in calls} - own  # its own `main` is not another's
    methods = {func.attr for func in calls if isinstance(func, ast.Attribute)}
    for routine in routines:
        if routine.owner is None and routine.name in names:
            return routine
        if routine.owner in names and routine.name in methods:
            return routine
    return None
