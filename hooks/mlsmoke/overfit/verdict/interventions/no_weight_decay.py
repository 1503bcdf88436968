"""Weight decay off: the same training with every param group's ``weight_decay`` at
0, which tests a floor that the regularizer sets (a decay the data term cannot
outweigh holds the weights near 0). Tried only where the optimizer's own groups
show a decay above 0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with weight_decay 0"


def check(run: GateRun) -> runner.Outcome:
    return runner.probe(
        run, CHANGE, optimizer_factory=_without_decay(run.optimizer_factory)
    )


def _without_decay(factory: Callable[[Any, float | None], Any]) -> Callable:
    def build(model: Any, lr: float | None) -> Any:
        recipe = factory(model, lr)
        for group in getattr(recipe.optimizer, "param_groups", []):
            if "weight_decay" in group:
                group["weight_decay"] = 0.0
        return recipe

    return build
