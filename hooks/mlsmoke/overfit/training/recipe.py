"""The training recipe the gate steps: an optimizer, an optional lr scheduler, and
where they came from.

A recipe factory is ``(model, lr) -> Recipe``; ``lr`` is None to keep the recipe's
own learning rate. :func:`as_recipe` accepts what projects return: an optimizer,
``(optimizer, scheduler)``, or a Lightning-style dict
``{"optimizer": ..., "lr_scheduler": scheduler | {"scheduler": ..., "interval":
"step" | "epoch", "frequency": n}}``. The gate trains one batch per epoch (Lightning's
``overfit_batches=1``), so an "epoch" scheduler steps once per optimizer step, like a
"step" one.

Schedulers are duck-typed (anything with ``.step()``), so no torch.optim.lr_scheduler
import is needed, and LR scaling touches only attributes torch's schedulers and
Lightning's configurations are known to hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlsmoke.overfit.training.evidence import ProjectProblem

INTERVALS = ("step", "epoch")
# Param-group keys and scheduler attributes that hold learning rates, scaled together
# so a probe at ``lr_scale`` runs the same schedule at a scaled rate.
GROUP_LR_KEYS = ("lr", "initial_lr", "max_lr", "min_lr")
SCHEDULER_LR_LISTS = ("base_lrs", "max_lrs", "min_lrs")


@dataclass
class Recipe:
    """One optimizer and its optional scheduler, as the loop steps them."""

    optimizer: Any
    scheduler: Any = None
    interval: str = "step"
    frequency: int = 1
    source: str = "built-in Adam"
    # ReduceLROnPlateau-style: its step() takes the monitored value (the loss).
    monitors_loss: bool = False

    @property
    def lr(self) -> float:
        """The first param group's learning rate now."""
        return float(self.optimizer.param_groups[0]["lr"])

    @property
    def scheduler_name(self) -> str | None:
        return None if self.scheduler is None else type(self.scheduler).__name__

    def step_scheduler(self, step: int, loss: float) -> None:
        """After optimizer update ``step`` (0-based): step the scheduler when its
        interval and frequency say so."""
        if self.scheduler is None or (step + 1) % self.frequency:
            return
        if self.monitors_loss:
            self.scheduler.step(loss)
        else:
            self.scheduler.step()

    def override_lr(self, lr: float) -> None:
        """Every param group's base rate at ``lr`` (the ``lr`` key); the schedule
        keeps its shape (a warmup at 0 at step 0 stays at 0)."""
        for group in self.optimizer.param_groups:
            base = group.get("initial_lr", group["lr"])
            group["lr"] = lr * group["lr"] / base if base else lr
            if "initial_lr" in group:
                group["initial_lr"] = lr
        if self.scheduler is not None and hasattr(self.scheduler, "base_lrs"):
            self.scheduler.base_lrs = [lr for _ in self.scheduler.base_lrs]

    def scale_lr(self, factor: float) -> None:
        """Every learning rate of the recipe times ``factor``: the param groups and
        the scheduler's base rates, so the schedule keeps its shape."""
        if factor == 1.0:
            return
        for group in self.optimizer.param_groups:
            for key in GROUP_LR_KEYS:
                if isinstance(group.get(key), (int, float)):
                    group[key] = group[key] * factor
        for name in SCHEDULER_LR_LISTS:
            rates = getattr(self.scheduler, name, None)
            if isinstance(rates, list):
                setattr(self.scheduler, name, [rate * factor for rate in rates])
        last = getattr(self.scheduler, "_last_lr", None)
        if isinstance(last, list):
            self.scheduler._last_lr = [rate * factor for rate in last]


def as_recipe(returned: Any, source: str) -> Recipe:
    """A Recipe from what an optimizer factory returned; ProjectProblem otherwise."""
    if isinstance(returned, Recipe):
        return returned
    if isinstance(returned, Mapping):
        return _from_mapping(returned, source)
    if isinstance(returned, (tuple, list)) and len(returned) == 2:
        optimizer, scheduler = returned
        recipe = Recipe(_optimizer(optimizer, source), source=source)
        return _with_scheduler(recipe, scheduler, source)
    return Recipe(_optimizer(returned, source), source=source)


def _from_mapping(returned: Mapping, source: str) -> Recipe:
    recipe = Recipe(_optimizer(returned.get("optimizer"), source), source=source)
    return _with_scheduler(recipe, returned.get("lr_scheduler"), source)


def _with_scheduler(recipe: Recipe, scheduler: Any, source: str) -> Recipe:
    if scheduler is None:
        return recipe
    config: Mapping = scheduler if isinstance(scheduler, Mapping) else {}
    scheduler = config.get("scheduler", scheduler)
    if not callable(getattr(scheduler, "step", None)):
        raise _not_a(source, "scheduler", scheduler, "an object with .step()")
    interval, frequency = config.get("interval", "step"), config.get("frequency", 1)
    if interval not in INTERVALS:
        raise _not_a(source, "interval", interval, '"step" or "epoch"')
    if not isinstance(frequency, int) or frequency < 1:
        raise _not_a(source, "frequency", frequency, "a positive integer")
    recipe.scheduler, recipe.interval, recipe.frequency = scheduler, interval, frequency
    # torch's ReduceLROnPlateau and Lightning's reduce_on_plateau flag
    recipe.monitors_loss = bool(
        config.get("reduce_on_plateau") or hasattr(scheduler, "num_bad_epochs")
    )
    return recipe


def _optimizer(candidate: Any, source: str) -> Any:
    groups = getattr(candidate, "param_groups", None)
    if not isinstance(groups, list) or not callable(getattr(candidate, "step", None)):
        raise _not_a(source, "optimizer", candidate, "a torch.optim.Optimizer")
    return candidate


def _not_a(source: str, what: str, value: Any, expected: str) -> ProjectProblem:
    found = f"a {type(value).__name__}, not {expected} (from {source})"
    if what == "optimizer":
        message = f"the optimizer callable returned {found}"
    else:
        message = f"the optimizer callable's {what} is {found}"
    return ProjectProblem("not-an-optimizer", message, config_key="optimizer")
