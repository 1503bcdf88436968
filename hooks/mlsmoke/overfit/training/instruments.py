"""Instruments kept beside the training loop: forward hooks, gradient norms,
per-parameter gradients, non-finite tracking and the user's traceback.

``observers.py`` calls these at a few fixed points of the loop. Hooks are installed
for the first forward pass only (and for a replay when something goes wrong), so that
the loop runs at the speed of a hand-written one.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

import mlsmoke
from mlsmoke.overfit.training.determinism import (
    RandomState,
    random_state,
    same_random_state,
)

_MLSMOKE_DIR = Path(mlsmoke.__file__).resolve().parent
# torch's own dispatch frames between a module call and its forward, and the import
# machinery between import_module and the user's module: noise to users.
_NOISE = (
    ("torch/nn/modules/module.py", ("_call_impl", "_wrapped_call_impl", "inner")),
    ("importlib/__init__.py", ("import_module",)),
)
_IMPORT_MACHINERY = "<frozen importlib."


class ModuleTrace:
    """What the forward hooks saw: input shapes, run order, and the failing module."""

    def __init__(self) -> None:
        self.inputs: dict[str, list[tuple[int, ...]]] = {}
        self.none_arguments: dict[str, list[str]] = {}  # forward args given as None
        self.order: list[str] = []
        self.running: list[str] = []
        self.failed: str | None = None
        self.first_nonfinite: str | None = None
        # Dropout modules that ran in training mode, with their rate.
        self.dropout: dict[str, float] = {}
        # Random numbers drawn while no module was running: by the objective itself
        # (a diffusion loss's noise and timesteps), not by a layer.
        self.draws_outside_modules = False
        self.outside_state: RandomState | None = None

    def leave_modules(self) -> None:
        """No module runs from here (the forward starts, or a top-level module
        returned): what is drawn until the next one starts is the objective's."""
        self.outside_state = random_state()

    def enter_module(self) -> None:
        """A top-level module starts (or the forward ends): note whether the
        objective drew random numbers since no module ran."""
        if self.outside_state is not None and not same_random_state(
            self.outside_state, random_state()
        ):
            self.draws_outside_modules = True


def is_dropout(module: Any) -> bool:
    """A dropout module of any kind (Dropout, Dropout2d, AlphaDropout, a library's)."""
    return "Dropout" in type(module).__name__ and isinstance(
        getattr(module, "p", None), (int, float)
    )


def _shapes(args: tuple, kwargs: dict) -> list[tuple[int, ...]]:
    values = list(args) + list(kwargs.values())
    return [tuple(v.shape) for v in values if isinstance(v, torch.Tensor)]


def _none_arguments(module: Any, args: tuple, kwargs: dict) -> list[str]:
    """The names of the arguments ``module`` was called with as None (an input the
    caller never had, such as a batch field that is missing)."""
    names = [key for key, value in kwargs.items() if value is None]
    if any(value is None for value in args):
        try:
            parameters = list(inspect.signature(module.forward).parameters)
        except (TypeError, ValueError):
            parameters = []
        names += [
            parameters[i] if i < len(parameters) else f"argument {i}"
            for i, value in enumerate(args)
            if value is None
        ]
    return names


def _has_nonfinite(output: Any) -> bool:
    """Whether a module's output holds NaN or Inf; computed without autograd, so the
    check adds nothing to what the graph saves (gradient checkpointing recomputes
    the forward without these hooks and compares what it saved)."""
    if isinstance(output, torch.Tensor):
        if not output.is_floating_point():
            return False
        with torch.no_grad():
            return not bool(torch.isfinite(output.detach()).all())
    if isinstance(output, (tuple, list)):
        return any(_has_nonfinite(item) for item in output)
    if isinstance(output, dict):
        return any(_has_nonfinite(item) for item in output.values())
    return False


@contextmanager
def traced_modules(model: torch.nn.Module) -> Iterator[ModuleTrace]:
    """Record the modules' inputs and order while the block runs; on an exception,
    ``trace.failed`` is the innermost module whose forward was running."""
    trace = ModuleTrace()
    handles = []

    def before(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict) -> None:
            if not trace.running:
                trace.enter_module()
            trace.inputs[name] = _shapes(args, kwargs)
            trace.none_arguments[name] = _none_arguments(module, args, kwargs)
            trace.order.append(name)
            trace.running.append(name)
            if is_dropout(module) and module.training and module.p > 0:
                trace.dropout[name or "model"] = float(module.p)

        return hook

    def after(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict, output: Any) -> None:
            if trace.running and trace.running[-1] == name:
                trace.running.pop()
            if not trace.running:
                trace.leave_modules()
            if trace.first_nonfinite is None and _has_nonfinite(output):
                trace.first_nonfinite = name

        return hook

    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(name), with_kwargs=True))
        handles.append(module.register_forward_hook(after(name), with_kwargs=True))
    trace.leave_modules()
    try:
        yield trace
        trace.enter_module()
    except BaseException:
        trace.failed = trace.running[-1] if trace.running else None
        raise
    finally:
        for handle in handles:
            handle.remove()


def replay_forward(model: torch.nn.Module, forward: Callable[[], Any]) -> ModuleTrace:
    """Run ``forward`` again under hooks, without gradients, to locate a failure or the
    first non-finite output; whatever it raises is swallowed (the first run's error is
    the one reported)."""
    trace = None
    try:
        with torch.no_grad(), traced_modules(model) as trace:
            forward()
    except Exception:
        pass
    return trace if trace is not None else ModuleTrace()


def total_grad_norm(parameters: list[torch.nn.Parameter]) -> float:
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    norms = torch._foreach_norm(grads)
    return float(torch.linalg.vector_norm(torch.stack(norms)))


def gradient_norms(model: torch.nn.Module) -> dict[str, float | None]:
    """Per named parameter: its gradient's norm, or None when it got no gradient."""
    return {
        name: None if p.grad is None else float(p.grad.detach().norm())
        for name, p in model.named_parameters()
    }


def requires_grad(model: torch.nn.Module) -> dict[str, bool]:
    return {name: p.requires_grad for name, p in model.named_parameters()}


def parameter_aliases(model: torch.nn.Module) -> dict[str, list[str]]:
    """For a parameter the model holds under several names (a tied weight:
    ``transformer.wte.weight`` is ``lm_head.weight``), its other names, keyed by the
    one ``named_parameters()`` gives."""
    names: dict[int, list[str]] = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(parameter), []).append(name)
    return {found[0]: found[1:] for found in names.values() if len(found) > 1}


def first_nonfinite_grad(model: torch.nn.Module) -> str | None:
    """The non-finite gradient backward reached first: the last one in module order."""
    found = None
    for name, p in model.named_parameters():
        if p.grad is not None and not bool(torch.isfinite(p.grad).all()):
            found = name
    return found


def user_traceback(error: BaseException) -> str | None:
    """``error``'s traceback without mlsmoke's frames, torch's dispatch frames and the
    import machinery; None when no frame is left (a callable called with the wrong
    arguments), since the error's own message says it all, unless it is a SyntaxError,
    which shows the user's line itself."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not _is_noise(frame)
    ]
    if not frames and not isinstance(error, SyntaxError):
        return None
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(error), error)
    return "".join(lines).rstrip("\n")


def _in_package(filename: str) -> bool:
    """Whether ``filename`` is one of mlsmoke's own files: by its directory, never by a
    word in the path (a checkout may live in a directory named mlsmoke)."""
    try:
        return Path(filename).resolve().is_relative_to(_MLSMOKE_DIR)
    except (OSError, ValueError):
        return False


def _is_noise(frame: traceback.FrameSummary) -> bool:
    if _in_package(frame.filename):
        return True
    filename = frame.filename.replace("\\", "/")
    if filename.startswith(_IMPORT_MACHINERY):
        return True
    return any(
        filename.endswith(path) and frame.name in names for path, names in _NOISE
    )
