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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mlsmoke.overfit.training.evidence import ProjectProblem

INTERVALS = ("step", "epoch")
# Param-group keys and scheduler attributes that hold learning rates, scaled together
# so a probe at ``lr_scale`` runs the same schedule at a scaled rate.
GROUP_LR_KEYS = ("lr", "initial_lr", "max_lr", "min_lr")
SCHEDULER_LR_LISTS = ("base_lrs", "max_lrs", "min_lrs", "_last_lr")
SCHEDULER_LR_FLOORS = ("eta_min",)  # an absolute floor, one for all groups
# Schedulers that drive others (SequentialLR, ChainedScheduler) keep them here.
NESTED_SCHEDULERS = "_schedulers"


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
    # Lightning's ``lr_scheduler_step(scheduler, metric)``, through which its Trainer
    # steps every scheduler; None: ``scheduler.step()``.
    step_hook: Callable[[Any, Any], Any] | None = None
    # The first group's rate as the project's factory built it, before the lr key
    # replaced it (0: a built-in optimizer).
    project_lr: float = 0.0

    @property
    def lr(self) -> float:
        """The first param group's learning rate now."""
        return float(self.optimizer.param_groups[0]["lr"])

    @property
    def configured_lr(self) -> float:
        """The rate the project configured for the first group: a one-cycle
        schedule's peak, a scheduler's base rate, else the lr now."""
        group = self.optimizer.param_groups[0]
        return float(group.get("max_lr", group.get("initial_lr", group["lr"])))

    @property
    def scheduler_name(self) -> str | None:
        return None if self.scheduler is None else type(self.scheduler).__name__

    def step_scheduler(self, step: int, loss: float) -> None:
        """After optimizer update ``step`` (0-based): step the scheduler when its
        interval and frequency say so."""
        if self.scheduler is None or (step + 1) % self.frequency:
            return
        metric = self._monitored(loss) if self.monitors_loss else None
        if self.step_hook is not None:
            self.step_hook(self.scheduler, metric)
        elif metric is None:
            self.scheduler.step()
        else:
            self.scheduler.step(metric)

    def _monitored(self, loss: float) -> float:
        """The value a plateau scheduler watches, as it improves when the loss
        falls: a scheduler in mode "max" (it watches an accuracy) gets -loss."""
        return -loss if getattr(self.scheduler, "mode", "min") == "max" else loss

    def override_lr(self, lr: float) -> None:
        """Every param group's base rate at ``lr`` (the ``lr`` key); the schedule
        keeps its shape (a warmup at 0 at step 0 stays at 0)."""
        factors = []
        for group in self.optimizer.param_groups:
            base = group.get("max_lr", group.get("initial_lr", group["lr"]))
            factors.append(lr / base if base else 0.0)
            if not base:
                group["lr"] = lr
        self._scale(factors, floor_factor=factors[0] if factors else 1.0)

    def scale_lr(self, factor: float) -> None:
        """Every learning rate of the recipe times ``factor``: the param groups and
        every scheduler's rates, nested ones included, so the schedule keeps its
        shape."""
        if factor != 1.0:
            self._scale([factor] * len(self.optimizer.param_groups), factor)

    def _scale(self, factors: list[float], floor_factor: float) -> None:
        for group, factor in zip(self.optimizer.param_groups, factors):
            for key in GROUP_LR_KEYS:
                if isinstance(group.get(key), (int, float)) and factor:
                    group[key] = group[key] * factor
        for scheduler in _schedulers_in(self.scheduler):
            for name in SCHEDULER_LR_LISTS:
                rates = getattr(scheduler, name, None)
                if isinstance(rates, list) and len(rates) == len(factors):
                    scaled = [r * f if f else r for r, f in zip(rates, factors)]
                    setattr(scheduler, name, scaled)
            for name in SCHEDULER_LR_FLOORS:
                floor = getattr(scheduler, name, None)
                if isinstance(floor, (int, float)) and floor_factor:
                    setattr(scheduler, name, floor * floor_factor)


def _schedulers_in(scheduler: Any) -> list[Any]:
    """``scheduler`` and the schedulers it drives, depth first."""
    if scheduler is None:
        return []
    found = [scheduler]
    for inner in getattr(scheduler, NESTED_SCHEDULERS, None) or []:
        found += _schedulers_in(inner)
    return found


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
