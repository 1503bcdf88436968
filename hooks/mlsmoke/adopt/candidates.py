"""Candidate model and batch factories for the gate, found by reading the source.

Nothing is imported: the project may need a GPU, a data set or minutes to import.
A model factory is a module-level function annotated to return a module, or returning
a call of a class that subclasses ``nn.Module``/``LightningModule`` (or has a
``training_step``); a class with ``training_step`` is one too. A batch factory returns
a ``DataLoader`` or a batch (its name says so), or is a data module class.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

_MODULE_BASES = {"Module", "LightningModule", "Sequential", "PreTrainedModel"}
_DATA_BASES = {"LightningDataModule", "DataModule"}
_LOADERS = {"DataLoader"}
_BATCH_NAME = re.compile(r"(^|_)(batch|batches|example_batch|sample_batch)($|_)")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Candidate:
    spec: str  # package.module:callable
    why: str


@dataclass
class Candidates:
    models: list[Candidate] = field(default_factory=list)
    batches: list[Candidate] = field(default_factory=list)


def module_name(path: str) -> str | None:
    """The import name of a project file, src layout understood; None for tests."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or any(p in ("tests", "test", "docs", "examples") for p in parts[:1]):
        return None
    if not all(_IDENTIFIER.match(part) for part in parts):
        return None
    return ".".join(parts)


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return _last_name(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(".")[-1]
    return ""


def _is_nn_call(node: ast.expr) -> bool:
    """``nn.Sequential(...)``, ``torch.nn.Linear(...)``: a module of torch.nn."""
    return isinstance(node, ast.Attribute) and _last_name(node.value) == "nn"


def _classes(trees: dict[str, ast.Module]) -> tuple[set[str], set[str]]:
    """Names of the project's model classes and data module classes, by inheritance."""
    bases: dict[str, set[str]] = {}
    methods: dict[str, set[str]] = {}
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {_last_name(base) for base in node.bases}
                methods[node.name] = {
                    item.name for item in node.body if isinstance(item, ast.FunctionDef)
                }
    models = {name for name, m in methods.items() if "training_step" in m}
    models |= {name for name, b in bases.items() if b & _MODULE_BASES}
    data = {name for name, m in methods.items() if "train_dataloader" in m}
    data |= {name for name, b in bases.items() if b & _DATA_BASES}
    grew = True
    while grew:
        grew = False
        for name, b in bases.items():
            for kind in (models, data):
                if name not in kind and b & kind:
                    kind.add(name)
                    grew = True
    return models, data - models


def _returns(function: ast.FunctionDef) -> Iterable[ast.expr]:
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            yield node.value


def find(root: Path, paths: Iterable[str]) -> Candidates:
    trees: dict[str, ast.Module] = {}
    for path in paths:
        module = module_name(path)
        if module is None:
            continue
        try:
            trees[module] = ast.parse((root / path).read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
    models, data = _classes(trees)
    found = Candidates()
    for module, tree in sorted(trees.items()):
        for node in tree.body:
            _consider(module, node, models, data, found)
    # Factories first: a class may need arguments its default construction lacks.
    found.models.sort(key=lambda candidate: candidate.why.startswith("class"))
    found.batches.sort(key=lambda candidate: candidate.why == "data module")
    return found


def _consider(module, node, models, data, found: Candidates) -> None:
    spec = f"{module}:{getattr(node, 'name', '')}"
    if isinstance(node, ast.ClassDef):
        if node.name in models and any(
            isinstance(i, ast.FunctionDef) and i.name == "training_step"
            for i in node.body
        ):
            found.models.append(Candidate(spec, "class with training_step"))
        elif node.name in data:
            found.batches.append(Candidate(spec, "data module"))
        return
    if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
        return
    annotated = _last_name(node.returns) if node.returns is not None else ""
    called = {
        _last_name(value.func)
        for value in _returns(node)
        if isinstance(value, ast.Call)
    }
    nn_call = any(
        isinstance(v, ast.Call) and _is_nn_call(v.func) for v in _returns(node)
    )
    if annotated in _MODULE_BASES | models or called & models or nn_call:
        what = annotated or next(iter(called & models), "an nn module")
        found.models.append(Candidate(spec, f"returns {what}"))
    elif annotated in _LOADERS or called & _LOADERS:
        found.batches.append(Candidate(spec, "returns a DataLoader"))
    elif _BATCH_NAME.search(node.name):
        found.batches.append(Candidate(spec, "named as a batch"))
