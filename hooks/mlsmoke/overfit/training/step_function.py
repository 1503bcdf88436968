"""The project's training step (``step = "package.module:train_step"``): which of its
parameters get what, and the loss it returns.

Step functions in the wild name their parameters rather than agree on an order:
``train_step(model, batch, optimizer)``, ``train_step(model, optimizer, batch,
scheduler)``, ``training_step(model, x, y, optimizer, step)``. A parameter is bound by
its name (ROLES); one with a default is left to it; any other is a wrong signature.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlsmoke.overfit.training.evidence import ProjectProblem

CONFIG_KEY = "step"
# role -> the parameter names that ask for it
ROLES: dict[str, tuple[str, ...]] = {
    "model": ("model", "net", "network", "module"),
    "batch": ("batch", "data", "sample", "example", "batch_data"),
    "inputs": ("x", "inputs", "input", "images", "features"),
    "targets": ("y", "targets", "target", "labels", "label"),
    "optimizer": ("optimizer", "opt", "optim"),
    "scheduler": ("scheduler", "lr_scheduler", "sched"),
    "index": ("step", "iteration", "it", "iter_num", "global_step", "step_index"),
    "device": ("device",),
}
ROLE_OF = {name: role for role, names in ROLES.items() for name in names}


@dataclass
class StepFunction:
    """A step function and the role of each parameter it takes."""

    function: Callable[..., Any]
    name: str  # "package.module:train_step"
    roles: dict[str, str]  # parameter name -> role
    positional_only: tuple[str, ...] = ()

    @property
    def code(self) -> Any:
        return getattr(inspect.unwrap(self.function), "__code__", None)

    def call(self, values: Mapping[str, Any]) -> Any:
        """Call it with ``values`` by role (model, batch, optimizer, ...)."""
        if "inputs" in self.roles.values():
            values = {**values, **split_batch(values["batch"], self.name)}
        arguments = {name: values[role] for name, role in self.roles.items()}
        positional = [arguments.pop(name) for name in self.positional_only]
        return self.function(*positional, **arguments)


def bind(function: Callable[..., Any], name: str) -> StepFunction:
    """``function``'s roles; ProjectProblem (config key ``step``) for a signature the
    gate cannot call."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        raise _wrong(name, "its signature cannot be read") from None
    roles: dict[str, str] = {}
    positional_only: list[str] = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        role = ROLE_OF.get(parameter.name)
        if role is None:
            if parameter.default is parameter.empty:
                raise _wrong(name, f"it takes {parameter.name!r}, which the gate"
                                   " cannot give")  # fmt: skip
            continue
        roles[parameter.name] = role
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional_only.append(parameter.name)
    taken = set(roles.values())
    if "model" not in taken or not taken & {"batch", "inputs"}:
        raise _wrong(name, "it takes no model and batch")
    if ("inputs" in taken) != ("targets" in taken):
        raise _wrong(name, "it takes inputs without targets, or targets without"
                           " inputs")  # fmt: skip
    return StepFunction(function, name, roles, tuple(positional_only))


def _wrong(name: str, why: str) -> ProjectProblem:
    accepted = "; ".join(f"{role}: {', '.join(names)}" for role, names in ROLES.items())
    return ProjectProblem(
        "step-signature",
        f"the step function {name} cannot be called: {why}. The gate passes by"
        f" parameter name ({accepted}); other parameters need a default, see"
        " docs/train-step.md",
        config_key=CONFIG_KEY,
    )


def split_batch(batch: Any, name: str) -> dict[str, Any]:
    """An (inputs, targets) batch for a step function that takes them apart."""
    if isinstance(batch, Sequence) and len(batch) == 2:
        return {"inputs": batch[0], "targets": batch[1]}
    raise ProjectProblem(
        "step-signature",
        f"the step function {name} takes inputs and targets, but the batch is not a"
        " pair (inputs, targets); take a batch parameter instead",
        config_key=CONFIG_KEY,
    )


def loss_value(returned: Any, name: str) -> tuple[float, Any]:
    """The loss a call returned, as a float, and the tensor it came from (or None):
    a scalar tensor, a number, a mapping with "loss", or a tuple led by the loss."""
    if returned is None:
        raise ProjectProblem(
            "step-returns-nothing",
            f"the step function {name} returns nothing; return the loss (a tensor"
            " or a float): the gate's verdict reads its curve",
            config_key=CONFIG_KEY,
        )
    if isinstance(returned, Mapping) and "loss" in returned:
        return loss_value(returned["loss"], name)
    if isinstance(returned, (tuple, list)) and returned:
        return loss_value(returned[0], name)
    if isinstance(returned, (int, float)) and not isinstance(returned, bool):
        return float(returned), None
    numel = getattr(returned, "numel", None)
    if callable(numel) and numel() == 1:
        return float(returned.detach().float().item()), returned
    raise ProjectProblem(
        "step-returns-no-loss",
        f"the step function {name} returned {type(returned).__name__}, not a loss;"
        " return a scalar tensor, a float, or a mapping with a 'loss' entry",
        config_key=CONFIG_KEY,
    )
