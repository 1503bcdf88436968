"""Register what the model keeps in plain attributes: the same training with every
module held in a plain list, tuple or dict added as a submodule, and every bare
trainable tensor (in an attribute, a list or a dict) made an ``nn.Parameter`` in its
place, so that ``model.parameters()``, and the optimizer built from it, hold them.
Tests ``unregistered-parameters`` for layers in a Python list and bare tensors.

Forward reads the same attribute, list item or dict entry as before: a module is the
same object, now also a submodule; a tensor is replaced by a parameter that shares
its data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with the layers and tensors kept in plain attributes registered"
PREFIX = "registered_"


def check(run: GateRun) -> runner.Outcome:
    return runner.probe(run, CHANGE, model_factory=_registered(run.model_factory))


def _registered(factory: Callable[[], Any]) -> Callable[[], Any]:
    def build() -> Any:
        model = factory()
        if not register_plain_attributes(model):
            raise RuntimeError("nothing trainable sits in a plain attribute")
        return model

    return build


def register_plain_attributes(model: torch.nn.Module) -> int:
    """Register every trainable module and tensor the modules of ``model`` keep in
    plain attributes; how many were not registered before."""
    owned = {id(p) for p in model.parameters()}
    count = 0
    for module in list(model.modules()):
        for attribute, value in list(vars(module).items()):
            if not attribute.startswith("_"):
                count += _register(module, attribute, value, owned)
    return count


def _register(module: torch.nn.Module, name: str, value: Any, owned: set[int]) -> int:
    if _bare_trainable(value, owned):
        setattr(module, name, _parameter(value, owned))  # nn.Module moves it over
        return 1
    if isinstance(value, (list, dict)):
        keys = range(len(value)) if isinstance(value, list) else list(value)
        return sum(_register_item(module, name, value, key, owned) for key in keys)
    if type(value) is tuple:  # rebuilt: its items cannot be replaced in place
        items = list(value)
        count = _register(module, name, items, owned)
        if count:
            setattr(module, name, tuple(items))
        return count
    return 0


def _register_item(
    module: torch.nn.Module, name: str, container: Any, key: Any, owned: set[int]
) -> int:
    item = container[key]
    registered_name = f"{PREFIX}{name}_{_safe(key)}"
    if isinstance(item, torch.nn.Module):
        fresh = [p for p in item.parameters() if id(p) not in owned]
        if not fresh:
            return 0
        module.add_module(registered_name, item)
        owned.update(id(p) for p in fresh)
        return 1
    if _bare_trainable(item, owned):
        parameter = _parameter(item, owned)
        container[key] = parameter
        module.register_parameter(registered_name, parameter)
        return 1
    return 0


def _bare_trainable(value: Any, owned: set[int]) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and not isinstance(value, torch.nn.Parameter)
        and value.requires_grad
        and value.is_leaf
        and id(value) not in owned
    )


def _parameter(tensor: torch.Tensor, owned: set[int]) -> torch.nn.Parameter:
    parameter = torch.nn.Parameter(tensor.detach())
    owned.add(id(parameter))
    return parameter


def _safe(key: Any) -> str:
    return re.sub(r"\W", "_", str(key))
