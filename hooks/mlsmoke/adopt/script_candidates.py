"""The project's training script, for the gate's script mode, found by reading the
source: a file that builds a ``torch.optim`` optimizer (or calls
``configure_optimizers``), calls ``backward()`` and ``step()`` in a loop, and runs as a
script (at its top level, or under ``if __name__ == "__main__"``). The optimizer and
the loop may be those of a project routine the script calls (``Trainer(...).run()``),
or of a library's trainer (``transformers.Trainer(...).train()``).

Files of benchmarks, examples, docs and tests are passed over, and so are test files
wherever they are. ``train*.py`` comes first, then the shallowest path. Nothing is
imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mlsmoke.adopt import library_trainers, training_routines
from mlsmoke.adopt.candidates import runs_on_import
from mlsmoke.ast_names import dotted, last

NOT_SCRIPTS = ("benchmarks", "benchmark", "examples", "example", "docs", "tests",
               "test", "testing")  # fmt: skip
_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
_PIN_NAME = re.compile(r"^(get|next|sample|load|make)_?batch(es)?$|^batch$")


@dataclass(frozen=True)
class TrainingScript:
    path: str  # relative to the root, with /
    why: str  # "builds torch.optim.AdamW (line 40), backward() and step() in ..."
    pin: str | None = None  # "train:get_batch": the function the gate pins


def find(root: Path, paths: Iterable[str]) -> TrainingScript | None:
    """The training script among ``paths`` (Python files of the repository)."""
    sources = {}
    for path in paths:
        if may_be_script(path):
            try:
                sources[path] = (root / path).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
    return choose(sources)


def may_be_script(path: str) -> bool:
    """Not a test, a benchmark, an example or docs: a file the gate may run."""
    parts = PurePosixPath(path).parts
    if not path.endswith(".py") or any(part in NOT_SCRIPTS for part in parts[:-1]):
        return False
    return not _TEST_FILE.match(parts[-1])


def choose(sources: Mapping[str, str]) -> TrainingScript | None:
    """The training script among ``sources`` (path -> text): ``train*.py`` first,
    then the shallowest, then by name."""
    trees = {}
    for path, source in sources.items():
        if not may_be_script(path):
            continue
        try:
            trees[path] = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
    routines = training_routines.find(trees, trains)
    found = []
    for path, tree in trees.items():
        why = training_script(tree, routines)
        if why is not None:
            found.append(TrainingScript(path, why, pin_function(tree, path)))
    if not found:
        return None
    return min(found, key=_rank)


def _rank(script: TrainingScript) -> tuple[bool, int, str]:
    parts = PurePosixPath(script.path).parts
    return not parts[-1].startswith("train"), len(parts), script.path


def training_script(
    tree: ast.Module, routines: Sequence[training_routines.Routine] = ()
) -> str | None:
    """Why ``tree`` is a training script, or None: it runs as a script, and it
    builds an optimizer and calls backward() and step() in a loop, itself or
    through one of the project's ``routines`` it calls."""
    if not (runs_on_import(tree) or _has_main_guard(tree)):
        return None
    why = trains(tree) or library_trainers.trains_through(tree)
    if why is not None:
        return why
    routine = training_routines.called_by(tree, list(routines))
    if routine is None:
        return None
    return f"calls {routine.qualname()} of {routine.path}, which {routine.why}"


def trains(node: ast.AST) -> str | None:
    """Why the code of ``node`` trains, or None: it builds an optimizer, and calls
    backward() and step() in a loop."""
    imported = optimizer_names(node)
    built = next(
        (call for call in _calls(node) if builds_optimizer(call, imported)), None
    )
    loop = next((inner for inner in ast.walk(node) if _trains(inner)), None)
    if built is None or loop is None:
        return None
    return (
        f"builds {dotted(built.func, '...')} (line {built.lineno}); backward() and"
        f" step() in the loop at line {loop.lineno}"
    )


def pin_function(tree: ast.Module, path: str) -> str | None:
    """``module:function`` of a module-level ``get_batch``-style function that returns
    the batch and that the script calls; None: the gate pins the first DataLoader."""
    called = {last(call.func) for call in _calls(tree)}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not _PIN_NAME.match(node.name):
            continue
        if node.name not in called or not _returns_a_value(node):
            continue
        module = PurePosixPath(path).with_suffix("").as_posix().replace("/", ".")
        return f"{module}:{node.name}"
    return None


def _returns_a_value(function: ast.FunctionDef) -> bool:
    inner = list(ast.walk(function))
    if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in inner):
        return False
    return any(isinstance(n, ast.Return) and n.value is not None for n in inner)


def _has_main_guard(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [node.test.left, *node.test.comparators]
            if any(isinstance(n, ast.Name) and n.id == "__name__" for n in names):
                return True
    return False


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def optimizer_names(tree: ast.AST) -> set[str]:
    """Names imported from an optimizer module: ``from torch.optim import AdamW``."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and "optim" in (node.module or "").split(".")
        and "lr_scheduler" not in (node.module or "")
        for alias in node.names
    }


def builds_optimizer(call: ast.Call, imported: set[str]) -> bool:
    """``torch.optim.AdamW(...)``, ``optim.SGD(...)``, ``AdamW(...)`` imported from
    torch.optim, or ``configure_optimizers(...)``."""
    parts = dotted(call.func, "...").split(".")
    if len(parts) == 1 and parts[0] in imported:
        return True
    if "lr_scheduler" in parts:
        return False
    return "optim" in parts[:-1] or parts[-1] == "configure_optimizers"


def _trains(node: ast.AST) -> bool:
    """A loop that calls backward() and step()."""
    if not isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
        return False
    called = {last(call.func) for call in _calls(node)}
    return {"backward", "step"} <= called
