"""The loop with the project's step function as its body: the step does its own
forward, backward, clipping, ``optimizer.step()`` and ``scheduler.step()``; the loop
records the loss it returns and stops as the gate's own loop does.

The model is not put in train mode here: the step sees it as the project's loop would.
``step_watch.py`` checks the step's invariants around its first calls.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.training import instruments, observers
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.recipe import Recipe
from mlsmoke.overfit.training.run_state import TrainingRun
from mlsmoke.overfit.training.step_function import CONFIG_KEY, loss_value
from mlsmoke.overfit.training.step_lines import raising_line
from mlsmoke.overfit.training.step_watch import StepWatch

Stops = Callable[[TrainingRun, int, float], bool]


def train_with_step(run: TrainingRun, recipe: Recipe, stops: Stops) -> None:
    evidence = run.evidence
    assert run.step is not None
    evidence.step_function = run.step.name
    parameters = [p for group in recipe.optimizer.param_groups for p in group["params"]]

    def on_update() -> None:  # what the gate's loop records at each update
        run.phase = "step"
        observers.observe_gradients(run, len(evidence.grad_norms), parameters)
        evidence.lrs.append(recipe.lr)

    watch = StepWatch(run, run.step, recipe.optimizer, recipe.scheduler,
                      run.accumulate, on_update)  # fmt: skip
    values = {"model": run.model, "batch": run.batch, "optimizer": recipe.optimizer,
              "scheduler": recipe.scheduler, "device": evidence.device}  # fmt: skip
    watch.install()
    try:
        _loop(run, watch, values, stops)
        watch.finish()
    finally:
        watch.uninstall()


def _loop(run: TrainingRun, watch: StepWatch, values: dict, stops: Stops) -> None:
    evidence = run.evidence
    for step in range(evidence.max_steps + 1):
        run.phase = "forward"
        returned = _first_call(run, watch, values) if step == 0 else (
            watch.call(step, values))  # fmt: skip
        value, _ = loss_value(returned, run.step.name if run.step else "")
        evidence.losses.append(value)
        if run.on_step is not None:
            run.on_step(step, value)
        if not math.isfinite(value):
            _record_nonfinite(run)
            return
        if stops(run, step, value):
            return


def _first_call(run: TrainingRun, watch: StepWatch, values: dict) -> Any:
    """The first call, under the module trace the gate's first forward gets; an
    error raised by the step function's own lines is a config error naming it."""
    caught: list[warnings.WarningMessage] = []
    try:
        with instruments.traced_modules(run.model) as run.trace:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                returned = watch.call(0, values)
    except Exception as error:
        raise _own_error(run, error) from None
    finally:
        run.evidence.forward_warnings = observers.replayed_warnings(caught)
    evidence, trace = run.evidence, run.trace
    evidence.module_inputs, evidence.module_order = trace.inputs, trace.order
    evidence.module_none_arguments, evidence.dropout = (
        trace.none_arguments,
        trace.dropout,
    )
    return returned


def _own_error(run: TrainingRun, error: Exception) -> Exception:
    """``error`` as raised, when the model, the loss or torch raised it (the
    diagnoses read it); a config error when the step function's own line did."""
    step = run.step
    assert step is not None
    if run.evidence.step_findings or run.trace is None or run.trace.failed:
        run.phase = "backward" if run.evidence.step_findings else run.phase
        return error
    frames = error.__traceback__
    while frames is not None and frames.tb_next is not None:
        frames = frames.tb_next
    if frames is None or frames.tb_frame.f_code is not step.code:
        return error
    where = raising_line(error, step.code)
    return ProjectProblem(
        "step-raised",
        f"the step function {step.name} raised {type(error).__name__}: {error}"
        f" before any step ({where})",
        config_key=CONFIG_KEY,
    )


def _record_nonfinite(run: TrainingRun) -> None:
    """The gate's own forward and backward find the module and parameter that went
    non-finite (the step's graph is gone)."""
    try:
        observers.record_nonfinite(run, run.forward())
    except Exception:
        pass
