"""``configure_optimizers()`` in every form Lightning accepts, as one optimizer and its
schedulers: an optimizer; a list or tuple of optimizers; ``(optimizers, schedulers)``;
a dict with ``optimizer`` and an optional ``lr_scheduler`` (a scheduler, or a dict with
``scheduler``, ``interval``, ``frequency``, ``monitor``); a list of such dicts.

The gate trains one loss with one optimizer, so several optimizers (a GAN) are a
configuration error that says how to give the gate a loss and an optimizer instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mlsmoke.overfit.training.evidence import ProjectProblem

SOURCE = "configure_optimizers"
INTERVALS = ("step", "epoch")

ONE_LOSS_ONE_OPTIMIZER = """\
give the gate one loss and one optimizer in pyproject.toml, e.g. in mypkg/gate.py:

    def loss(model, batch):
        return model.generator_loss(batch)  # one scalar tensor

    def optimizer(params):
        return torch.optim.Adam(params, lr=2e-4)

    [tool.mlsmoke.overfit]
    loss = "mypkg.gate:loss"
    optimizer = "mypkg.gate:optimizer\""""


@dataclass
class Schedule:
    """One lr scheduler and when Lightning steps it."""

    scheduler: Any
    interval: str = "epoch"
    frequency: int = 1
    monitor: str | None = None


@dataclass
class ProjectRecipe:
    """The optimizer ``configure_optimizers()`` returned, with its schedulers."""

    optimizer: Any
    schedules: list[Schedule] = field(default_factory=list)
    source: str = SOURCE


def is_optimizer(value: Any) -> bool:
    return all(hasattr(value, name) for name in ("step", "zero_grad", "param_groups"))


def is_scheduler(value: Any) -> bool:
    return callable(getattr(value, "step", None)) and hasattr(value, "optimizer")


def normalize(returned: Any) -> ProjectRecipe:
    """The one optimizer and its schedules in ``returned``; ProjectProblem (a config
    error on ``optimizer``) for None, several optimizers or an unknown form."""
    optimizers, schedules = _split(returned)
    if not optimizers:
        raise _problem(
            "no-optimizer",
            "configure_optimizers() returned None (no optimizer);"
            f" {ONE_LOSS_ONE_OPTIMIZER}",
        )
    if len(optimizers) > 1:
        names = ", ".join(type(o).__name__ for o in optimizers)
        raise _problem(
            "several-optimizers",
            f"configure_optimizers() returned {len(optimizers)} optimizers"
            f" ({names}); the gate trains one loss with one optimizer, so"
            f" {ONE_LOSS_ONE_OPTIMIZER}",
        )
    (optimizer,) = optimizers
    for schedule in schedules:
        if schedule.scheduler.optimizer is not optimizer:
            raise _problem(
                "scheduler-optimizer",
                f"configure_optimizers(): the {type(schedule.scheduler).__name__}"
                " does not schedule the optimizer returned with it",
            )
    return ProjectRecipe(optimizer, schedules)


def _split(returned: Any) -> tuple[list[Any], list[Schedule]]:
    if returned is None:
        return [], []
    if is_optimizer(returned):
        return [returned], []
    if isinstance(returned, Mapping):
        return _from_dict(returned)
    if isinstance(returned, (list, tuple)):
        items = list(returned)
        if (
            len(items) == 2
            and isinstance(items[0], (list, tuple))
            and all(is_optimizer(o) for o in items[0])
        ):
            scheduled = items[1] if isinstance(items[1], (list, tuple)) else [items[1]]
            return list(items[0]), [_schedule(s) for s in scheduled]
        if items and all(isinstance(item, Mapping) for item in items):
            optimizers, schedules = [], []
            for item in items:
                found, scheduled = _from_dict(item)
                optimizers += found
                schedules += scheduled
            return optimizers, schedules
        if all(is_optimizer(o) for o in items):
            return items, []
    raise _problem(
        "unknown-optimizers",
        f"configure_optimizers() returned {_describe(returned)}; Lightning expects an"
        " optimizer, a list of optimizers, ([optimizers], [schedulers]) or a dict"
        ' with "optimizer" and "lr_scheduler"',
    )


def _from_dict(conf: Mapping) -> tuple[list[Any], list[Schedule]]:
    if not is_optimizer(conf.get("optimizer")):
        raise _problem(
            "unknown-optimizers",
            'configure_optimizers() returned a dict without an "optimizer"'
            f" (keys: {', '.join(map(str, conf))})",
        )
    schedules = []
    if conf.get("lr_scheduler") is not None:
        schedules.append(_schedule(conf["lr_scheduler"], conf.get("monitor")))
    return [conf["optimizer"]], schedules


def _schedule(value: Any, monitor: str | None = None) -> Schedule:
    if isinstance(value, Mapping):
        scheduler = value.get("scheduler")
        interval = value.get("interval", "epoch")
        frequency = value.get("frequency", 1)
        monitor = value.get("monitor", monitor)
    else:
        scheduler, interval, frequency = value, "epoch", 1
    if not is_scheduler(scheduler):
        raise _problem(
            "unknown-scheduler",
            f"configure_optimizers(): {_describe(scheduler)} is not an lr scheduler"
            " (it has no step() and no optimizer)",
        )
    if interval not in INTERVALS:
        raise _problem(
            "unknown-interval",
            f'configure_optimizers(): "interval" is {interval!r}; Lightning expects'
            ' "step" or "epoch"',
        )
    if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency < 1:
        raise _problem(
            "unknown-frequency",
            f'configure_optimizers(): "frequency" is {frequency!r}; expected an'
            " integer >= 1",
        )
    return Schedule(scheduler, interval, frequency, monitor)


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        inner = ", ".join(type(item).__name__ for item in value[:4])
        return f"a {type(value).__name__} of ({inner})"
    return "None" if value is None else f"a {type(value).__name__}"


def _problem(code: str, message: str) -> ProjectProblem:
    return ProjectProblem(code, message, config_key="optimizer")
