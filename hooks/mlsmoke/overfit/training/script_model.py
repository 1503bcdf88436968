"""The model a training script trains, found without the script's help: the module
that owns the most of its optimizer's parameters, and an untrained copy of it."""

from __future__ import annotations

import copy
import gc
from types import FrameType

import torch


def find_model(
    parameters: list[torch.nn.Parameter], frame: FrameType | None
) -> torch.nn.Module | None:
    """The module that owns the most of ``parameters``: among the modules the stack's
    frames hold, else among every live module; the outermost of equal owners."""
    wanted = {id(p) for p in parameters}
    candidates: list[torch.nn.Module] = []
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, torch.nn.Module):
                candidates.append(value)
        frame = frame.f_back
    best = _owner(candidates, wanted)
    if best is None:
        modules = [o for o in gc.get_objects() if isinstance(o, torch.nn.Module)]
        best = _owner(modules, wanted)
    return best


def _owner(modules: list[torch.nn.Module], wanted: set[int]) -> torch.nn.Module | None:
    best, best_score = None, (0, 0)
    for module in {id(m): m for m in modules}.values():
        owned = [p for p in module.parameters() if id(p) in wanted]
        score = (len(owned), len(list(module.modules())))
        if score > best_score:
            best, best_score = module, score
    return _unwrapped(best) if best is not None and best_score[0] else None


def _unwrapped(module: torch.nn.Module) -> torch.nn.Module:
    """A DDP or compiled wrapper's module: the one the script's model is."""
    inner = getattr(module, "module", None) or getattr(module, "_orig_mod", None)
    return inner if isinstance(inner, torch.nn.Module) else module


def untrained_copy(model: torch.nn.Module) -> torch.nn.Module:
    grads = {}
    for parameter in model.parameters():
        grads[parameter] = parameter.grad
        parameter.grad = None
    try:
        return copy.deepcopy(model)
    finally:
        for parameter, grad in grads.items():
            parameter.grad = grad
