"""The optimizers the gate trains with: a built-in name or the project's own factory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.evidence import ProjectProblem

BUILT_IN: dict[str, Callable[..., torch.optim.Optimizer]] = {
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "sgd": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9),
}

OptimizerFactory = Callable[[list, "float | None"], torch.optim.Optimizer]


def optimizer_factory(
    name: str, project_factory: Callable[[Any], Any] | None, default_lr: float
) -> OptimizerFactory:
    """``(params, lr) -> Optimizer``: a built-in (``lr`` None means ``default_lr``),
    or the project's ``(params) -> Optimizer`` with its lr replaced when one is given.
    """

    def build(params: list, lr: float | None) -> torch.optim.Optimizer:
        if project_factory is None:
            return BUILT_IN[name](params, lr=default_lr if lr is None else lr)
        optimizer = project_factory(params)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ProjectProblem(
                "not-an-optimizer",
                f"the optimizer callable returned a {type(optimizer).__name__},"
                " not a torch.optim.Optimizer",
                config_key="optimizer",
            )
        if lr is not None:
            for group in optimizer.param_groups:
                group["lr"] = lr
        return optimizer

    return build
