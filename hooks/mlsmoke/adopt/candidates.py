"""Candidate model and batch factories for the gate, found by reading the source.

Nothing is imported: the project may need a GPU, a data set or minutes to import.
A model factory is a module-level function annotated to return a module, or returning
a call of a class that subclasses ``nn.Module``/``LightningModule`` (or has a
``training_step``); a model class is one too. A batch factory returns a
``DataLoader`` or a batch (its name says so), or is a data module class.

A candidate must be buildable as the gate calls it, with no arguments: a callable with
required parameters is not one, nor is anything in a module that does work when
imported (a script that trains at its top level). A model class whose constructor
takes a config object with defaults (``GPT(GPTConfig())``) is recorded in
``Candidates.configurable``: :mod:`gate_module` writes the factory that builds it.
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


@dataclass(frozen=True)
class Parameter:
    name: str
    required: bool
    default: object = None  # a literal default, as written (None when not a literal)


@dataclass(frozen=True)
class ConfigClass:
    """A class whose fields all have defaults: ``GPTConfig()`` builds it."""

    module: str
    name: str
    fields: tuple[Parameter, ...]


@dataclass(frozen=True)
class ModelClass:
    """A model class of the project, with what building and training it needs."""

    module: str
    name: str
    init: tuple[Parameter, ...]  # the constructor's parameters, self left out
    config: ConfigClass | None  # what its one required parameter takes, if known
    recipe: tuple[Parameter, ...] | None  # configure_optimizers' parameters
    forward: tuple[Parameter, ...]  # forward's parameters, self left out
    builds: frozenset[str] = frozenset()  # the names it calls (Block inside GPT)


@dataclass
class Candidates:
    models: list[Candidate] = field(default_factory=list)
    batches: list[Candidate] = field(default_factory=list)
    configurable: list[ModelClass] = field(default_factory=list)
    classes: list[ModelClass] = field(default_factory=list)  # every model class
    passed_over: list[Candidate] = field(default_factory=list)  # why: not buildable


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


def parameters(function: ast.FunctionDef | None, method: bool) -> tuple[Parameter, ...]:
    """A function's parameters (``self`` left out of a method), required or not."""
    if function is None:
        return ()
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args][1 if method else 0 :]
    defaults = [None] * (len(positional) - len(arguments.defaults))
    defaults += list(arguments.defaults)
    found = [
        Parameter(arg.arg, default is None, _literal(default))
        for arg, default in zip(positional, defaults)
    ]
    found += [
        Parameter(arg.arg, default is None, _literal(default))
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
    ]
    return tuple(found)


def _literal(node: ast.expr | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None


def runs_on_import(tree: ast.Module) -> bool:
    """Whether importing the module does work beyond definitions: a loop, a ``with``,
    or a call as a statement (``exec(...)``, ``train()``) at its top level."""
    for node in tree.body:
        if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncFor)):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return True
    return False


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
    configs = _config_classes(trees)
    found = Candidates()
    for module, tree in sorted(trees.items()):
        scripted = runs_on_import(tree)
        for node in tree.body:
            _consider(module, node, models, data, found, scripted)
            if isinstance(node, ast.ClassDef) and node.name in models:
                found.classes.append(_model_class(module, node, configs))
    found.configurable = [c for c in found.classes if c.config is not None]
    _pass_over_parts(found)
    # Factories first: a class may need arguments its default construction lacks.
    found.models.sort(key=lambda candidate: candidate.why.startswith("class"))
    found.batches.sort(key=lambda candidate: candidate.why == "data module")
    return found


def _pass_over_parts(found: Candidates) -> None:
    """A model class another model class of the project builds is a part of that
    model (an activation, a block), not the model to gate: minGPT's ``NewGELU()``
    builds without arguments, and has no parameters."""
    outer = {
        part: model.name
        for model in found.classes
        for part in model.builds
        if part != model.name
    }
    kept = []
    for candidate in found.models:
        name = candidate.spec.rpartition(":")[2]
        if candidate.why.startswith("class") and name in outer:
            found.passed_over.append(
                Candidate(candidate.spec, f"a part of {outer[name]}")
            )
        else:
            kept.append(candidate)
    found.models = kept


def _config_classes(trees: dict[str, ast.Module]) -> dict[str, ConfigClass]:
    """Classes whose every field (annotated class attribute) has a default."""
    found = {}
    for module, tree in trees.items():
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            fields = [
                item
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            ]
            if fields and all(item.value is not None for item in fields):
                found[node.name] = ConfigClass(
                    module,
                    node.name,
                    tuple(
                        Parameter(item.target.id, False, _literal(item.value))
                        for item in fields
                    ),
                )
    return found


def _methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {i.name: i for i in node.body if isinstance(i, ast.FunctionDef)}


def _model_class(
    module: str, node: ast.ClassDef, configs: dict[str, ConfigClass]
) -> ModelClass:
    methods = _methods(node)
    init = parameters(methods.get("__init__"), method=True)
    required = [p for p in init if p.required]
    config = None
    if len(required) == 1:
        config = _config_for(node, methods["__init__"], required[0].name, configs)
    recipe = methods.get("configure_optimizers")
    return ModelClass(
        module,
        node.name,
        init,
        config,
        None if recipe is None else parameters(recipe, method=True),
        parameters(methods.get("forward"), method=True),
        frozenset(
            _last_name(call.func)
            for call in ast.walk(node)
            if isinstance(call, ast.Call)
        ),
    )


def _config_for(
    node: ast.ClassDef,
    init: ast.FunctionDef,
    parameter: str,
    configs: dict[str, ConfigClass],
) -> ConfigClass | None:
    """The config class a constructor's one parameter takes: its annotation, else
    ``<Class>Config``, else the one config class of the class's module."""
    arg = next(
        a for a in [*init.args.args, *init.args.kwonlyargs] if a.arg == parameter
    )
    if arg.annotation is not None:
        return configs.get(_last_name(arg.annotation))
    if f"{node.name}Config" in configs:
        return configs[f"{node.name}Config"]
    if "config" not in parameter.lower():
        return None
    return next(iter(configs.values())) if len(configs) == 1 else None


def _consider(module, node, models, data, found: Candidates, scripted: bool) -> None:
    spec = f"{module}:{getattr(node, 'name', '')}"
    if getattr(node, "name", "_").startswith("_"):
        return
    if scripted and isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        if node.name in models or _BATCH_NAME.search(node.name):
            found.passed_over.append(Candidate(spec, "its module runs when imported"))
        return
    if isinstance(node, ast.ClassDef):
        needs = [
            p.name
            for p in parameters(_methods(node).get("__init__"), True)
            if p.required
        ]
        if node.name in models and needs:
            found.passed_over.append(Candidate(spec, f"needs {', '.join(needs)}"))
        elif node.name in models:
            why = (
                "class with training_step" if "training_step" in _methods(node) else ""
            )
            found.models.append(
                Candidate(spec, why or "class, built without arguments")
            )
        elif node.name in data and not needs:
            found.batches.append(Candidate(spec, "data module"))
        return
    if not isinstance(node, ast.FunctionDef):
        return
    needs = [p.name for p in parameters(node, method=False) if p.required]
    if needs:
        if _BATCH_NAME.search(node.name) or node.returns is not None:
            found.passed_over.append(Candidate(spec, f"needs {', '.join(needs)}"))
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
