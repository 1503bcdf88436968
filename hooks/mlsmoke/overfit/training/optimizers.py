"""The optimizers the gate trains with: a built-in name or the project's own factory.

The built-ins apply torch.optim's update rules (Adam, AdamW, SGD with momentum 0.9, at
their default betas, eps and weight decay) without torch.optim: its first ``step()``
imports torch._dynamo, which takes 1.5 to 4 s on a small CPU, longer than memorizing a
small model. tests/overfit/optimizers_test.py checks they match torch.optim step for
step. A project optimizer (``"package.module:callable"``) is a real torch.optim one,
with an optional scheduler (see ``recipe.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch

from mlsmoke.overfit.training.construction import (
    built_where,
    optimizer_construction,
    takes_model,
)
from mlsmoke.overfit.training.recipe import Recipe, as_recipe


class LeanOptimizer:
    """The part of the torch.optim.Optimizer interface the gate uses."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float) -> None:
        self.param_groups: list[dict[str, Any]] = [{"params": list(params), "lr": lr}]
        self.state: dict[torch.nn.Parameter, dict[str, Any]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.param_groups[0]["params"]:
            p.grad = None

    def with_grads(self) -> list[torch.nn.Parameter]:
        return [p for p in self.param_groups[0]["params"] if p.grad is not None]


class Adam(LeanOptimizer):
    """torch.optim.Adam (``decoupled_weight_decay``: AdamW, weight decay 0.01)."""

    def __init__(self, params: Iterable, lr: float, decoupled_weight_decay=False):
        super().__init__(params, lr)
        self.betas, self.eps = (0.9, 0.999), 1e-8
        self.weight_decay = 0.01 if decoupled_weight_decay else 0.0

    @torch.no_grad()
    def step(self) -> None:
        params = self.with_grads()
        if not params:
            return
        lr, (beta1, beta2) = self.param_groups[0]["lr"], self.betas
        grads = [p.grad for p in params]
        states = [self._state(p) for p in params]
        step = states[0]["step"] = states[0]["step"] + 1
        for state in states[1:]:
            state["step"] = step
        means, squares = [s["mean"] for s in states], [s["square"] for s in states]
        if self.weight_decay:
            torch._foreach_mul_(params, 1 - lr * self.weight_decay)
        torch._foreach_lerp_(means, grads, 1 - beta1)
        torch._foreach_mul_(squares, beta2)
        torch._foreach_addcmul_(squares, grads, grads, 1 - beta2)
        denominators = torch._foreach_sqrt(squares)
        torch._foreach_div_(denominators, math.sqrt(1 - beta2**step))
        torch._foreach_add_(denominators, self.eps)
        torch._foreach_addcdiv_(params, means, denominators, -lr / (1 - beta1**step))

    def _state(self, p: torch.nn.Parameter) -> dict[str, Any]:
        if p not in self.state:
            self.state[p] = {
                "step": 0,
                "mean": torch.zeros_like(p),
                "square": torch.zeros_like(p),
            }
        return self.state[p]


class SGD(LeanOptimizer):
    """torch.optim.SGD with momentum 0.9."""

    momentum = 0.9

    @torch.no_grad()
    def step(self) -> None:
        lr = self.param_groups[0]["lr"]
        for p in self.with_grads():
            buffer = self.state.get(p)
            if buffer is None:
                buffer = self.state[p] = p.grad.clone()
            else:
                buffer.mul_(self.momentum).add_(p.grad)
            p.add_(buffer, alpha=-lr)


BUILT_IN: dict[str, Callable[..., Any]] = {
    "adam": Adam,
    "adamw": lambda params, lr: Adam(params, lr, decoupled_weight_decay=True),
    "sgd": SGD,
}


BUILT_IN_NAMES = {"adam": "Adam", "adamw": "AdamW", "sgd": "SGD"}


def optimizer_factory(
    name: str,
    project_factory: Callable[[Any], Any] | None,
    default_lr: float,
    source: str | None = None,
) -> Callable[[Any, float | None], Recipe]:
    """``(model, lr) -> Recipe``: a built-in (``lr`` None means ``default_lr``), or
    the project's ``(params) -> Optimizer | (Optimizer, scheduler)`` with its lr
    replaced when one is given. A project factory whose first parameter is the model
    (``def optimizer(model): return model.configure_optimizers(...)``) gets the model.
    ``source`` names the project's factory in reports, with the file and line that
    constructed the optimizer.
    """
    passes_model = project_factory is not None and takes_model(project_factory)

    def build(model: Any, lr: float | None) -> Recipe:
        params = list(model.parameters())
        if project_factory is None:
            optimizer = BUILT_IN[name](params, default_lr if lr is None else lr)
            return Recipe(optimizer, source=f"built-in {BUILT_IN_NAMES[name]}")
        origin = source or getattr(project_factory, "__qualname__", "the optimizer")
        with optimizer_construction() as site:
            returned = project_factory(model if passes_model else params)
        recipe = as_recipe(returned, built_where(site, origin))
        recipe.project_lr = recipe.configured_lr
        if lr is not None:
            recipe.override_lr(lr)
        return recipe

    return build
