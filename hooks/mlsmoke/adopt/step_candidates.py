"""Candidate step functions for the gate's ``step`` key, found by reading the source.

A step function takes a model and a batch (or inputs and targets), by the names the
gate passes (``overfit/training/step_function.py``), and calls ``backward()`` and
``step()``. A loop that does both outside any such function, inline in a script as
nanoGPT's ``train.py``, is reported with the refactor that makes its body one.
Nothing is imported.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke.adopt.candidates import module_name
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.step_function import ROLE_OF, bind

STEP_CALLS = ("backward", "zero_grad", "step", "clip_grad_norm_")


@dataclass(frozen=True)
class StepCandidate:
    spec: str  # package.module:function
    takes: tuple[str, ...]
    line: int
    gate_can_call: bool = True  # by its parameters' names, as the gate binds them


@dataclass(frozen=True)
class InlineLoop:
    path: str
    line: int  # the for/while statement
    calls: tuple[tuple[int, str], ...]  # (line, source) of backward, step, ...


@dataclass
class StepSearch:
    functions: list[StepCandidate] = field(default_factory=list)
    inline: list[InlineLoop] = field(default_factory=list)


def find(root: Path, paths: Iterable[str]) -> StepSearch:
    found = StepSearch()
    for path in sorted(paths):
        module = module_name(path)
        if module is None:
            continue
        try:
            source = (root / path).read_text("utf-8")
            tree = ast.parse(source)
        except (SyntaxError, ValueError, OSError):
            continue
        steps = [f for f in _functions(tree) if is_step_like(f)]
        found.functions += [
            StepCandidate(
                f"{module}:{f.name}", _parameters(f), f.lineno, gate_can_call(f)
            )
            for f in steps
        ]
        lines = source.splitlines()
        found.inline += [
            InlineLoop(path, loop.lineno, _step_calls(loop, lines))
            for loop in _inline_loops(tree, steps)
        ]
    return found


def is_step_like(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """It takes a model and a batch (or inputs and targets) by the gate's names and
    calls backward() and step()."""
    roles = {ROLE_OF.get(name) for name in _parameters(function)}
    takes_data = "batch" in roles or {"inputs", "targets"} <= roles
    called = _called(function)
    return "model" in roles and takes_data and {"backward", "step"} <= called


def gate_can_call(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the gate's own binding (``step_function.bind``) takes the signature
    written in the source: a stand-in function is given that signature, unimported."""

    def stand_in(*args: Any, **kwargs: Any) -> None:
        pass

    stand_in.__signature__ = _signature(function)  # type: ignore[attr-defined]
    try:
        bind(stand_in, function.name)
    except ProjectProblem:
        return False
    return True


def _signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> inspect.Signature:
    """The signature written in the source; a default is marked, not evaluated."""
    arguments, Parameter = function.args, inspect.Parameter
    positional = [*arguments.posonlyargs, *arguments.args]
    first_default = len(positional) - len(arguments.defaults)
    parameters = []
    for index, argument in enumerate(positional):
        only = index < len(arguments.posonlyargs)
        kind = Parameter.POSITIONAL_ONLY if only else Parameter.POSITIONAL_OR_KEYWORD
        default = Parameter.empty if index < first_default else ...
        parameters.append(Parameter(argument.arg, kind, default=default))
    if arguments.vararg is not None:
        parameters.append(Parameter(arguments.vararg.arg, Parameter.VAR_POSITIONAL))
    for argument, given in zip(arguments.kwonlyargs, arguments.kw_defaults):
        default = Parameter.empty if given is None else ...
        parameters.append(
            Parameter(argument.arg, Parameter.KEYWORD_ONLY, default=default)
        )
    if arguments.kwarg is not None:
        parameters.append(Parameter(arguments.kwarg.arg, Parameter.VAR_KEYWORD))
    return inspect.Signature(parameters)


def the_one(found: StepSearch) -> StepCandidate | None:
    """The step function init may write: the only one found that the gate can call."""
    callable_ = [candidate for candidate in found.functions if candidate.gate_can_call]
    return callable_[0] if len(callable_) == 1 else None


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Module-level functions; methods are not importable as ``module:function``."""
    return [node for node in tree.body if isinstance(node, ast.FunctionDef)]


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return tuple(argument.arg for argument in every)


def _called(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute):
                names.add(func.attr)
            elif isinstance(func, ast.Name):
                names.add(func.id)
    return names


def _inline_loops(tree: ast.Module, steps: list) -> list[ast.For | ast.While]:
    """Outermost loops that call backward() and step() and are not inside a step-like
    function."""
    found: list[ast.For | ast.While] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if child in steps:
                continue
            if isinstance(child, (ast.For, ast.While)) and {"backward", "step"} <= (
                _called(child)
            ):
                found.append(child)
                continue
            visit(child)

    visit(tree)
    return found


def _step_calls(loop: ast.AST, lines: list[str]) -> tuple[tuple[int, str], ...]:
    calls = {
        node.lineno
        for node in ast.walk(loop)
        if isinstance(node, ast.Call)
        and isinstance(node.func, (ast.Attribute, ast.Name))
        and getattr(node.func, "attr", getattr(node.func, "id", "")) in STEP_CALLS
    }
    return tuple((line, lines[line - 1].strip()) for line in sorted(calls))


def trial_note(spec: str) -> str:
    """What init says of the one step function it runs the gate with."""
    return (
        f'step = "{spec}", the one step function found: the gate runs once with it,'
        " and it stays in [tool.mlsmoke.overfit] only if the gate passes"
    )


def notes(found: StepSearch) -> list[str]:
    """What init says about ``step``: the candidates, else the inline loops and the
    refactor that gives the gate a function to call."""
    if found.functions:
        return [
            f"step candidate: {c.spec}({', '.join(c.takes)}) calls backward() and"
            f' step(); set step = "{c.spec}" in [tool.mlsmoke.overfit] and the gate'
            " trains with it and checks it (docs/train-step.md)"
            for c in found.functions
        ]
    return [refactor(loop) for loop in found.inline[:1]]


def refactor(loop: InlineLoop) -> str:
    """The small refactor that turns an inline loop's body into a step function."""
    module = module_name(loop.path) or Path(loop.path).stem
    shown = "\n".join(f"      #   {loop.path}:{n}: {text}" for n, text in loop.calls)
    return "\n".join([
        f"the training loop at {loop.path}:{loop.line} is inline, so the gate has no"
        " step function to call; move one iteration's body into a function:",
        "      def train_step(model, batch, optimizer):",
        "          model.train()",
        "          X, Y = batch",
        "          logits, loss = model(X, Y)  # the loop's forward and loss",
        "          optimizer.zero_grad(set_to_none=True)",
        "          loss.backward()",
        "          optimizer.step()  # clipping before it, the scheduler after it",
        "          return loss",
        "      # the lines it replaces:",
        shown,
        f"      then call loss = train_step(model, (X, Y), optimizer) in the loop, and"
        f' set step = "{module}:train_step" in [tool.mlsmoke.overfit]',
    ])  # fmt: skip
