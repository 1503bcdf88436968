"""The memorization loop: train a model on one batch until the loss reaches its target.

:func:`train` is a textbook PyTorch loop. What it trains on is built in ``setup.py``;
what it observes is recorded beside it, by ``observers.py``, at a few fixed points,
into an :class:`~mlsmoke.overfit.training.evidence.Evidence`. An objective that draws
random numbers of its own replays the first step's draws at every step. It never
raises for the project's errors: they are recorded, with the phase they happened in,
for the diagnoses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.training import observers, setup, step_loop
from mlsmoke.overfit.training.ranks import agreement
from mlsmoke.overfit.training.determinism import (
    deterministic,
    random_state,
    restore_random_state,
)
from mlsmoke.overfit.training.device import release_cuda_memory, restore_cpu_threads
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.training.objective import forward_loss
from mlsmoke.overfit.training.run_state import EarlyStop, StepCallback, TrainingRun
from mlsmoke.overfit.training.step_function import StepFunction

__all__ = [
    "StepCallback",
    "resolve_target",
    "settle_confirmed_pass",
    "stops_after",
    "train",
]

# Steps a loss that reached its target below zero trains on, to show a bound; a
# loss that reached it above zero trains on as many steps as it took, up to this,
# to show that it does not then fall through zero (a flipped KL term does).
BOUND_CHECK_STEPS = 20
# Updates after which a loss that never changed stops the run.
STALL_STEPS = 20


def train(
    model_factory: Callable[[], Any],
    batch_factory: Callable[[], Any],
    loss_fn: Callable[[Any, Any], Any] | None,
    optimizer_factory: Callable[[Any, float | None], Any],
    *,
    lr: float | None,
    lr_scale: float = 1.0,
    max_steps: int,
    target_loss: float | None,
    target_ratio: float | None,
    device: str,
    dtype: str | None = None,
    timeout: float,
    seed: int,
    on_step: StepCallback | None = None,
    step: StepFunction | None = None,
    accumulate: int = 1,
    train_mode: bool = True,
    keep_model: list[Any] | None = None,
    stop_early: EarlyStop | None = None,
) -> Evidence:
    """Train a fresh model on one batch; stop at the target, at ``max_steps`` updates,
    at ``timeout`` seconds, at a non-finite loss, or at the first error. The trained
    model is appended to ``keep_model`` when given (a check that reads it).
    ``stop_early(losses, target)``, a probe's own rule, may end it sooner.

    ``optimizer_factory(model, lr)`` gives the recipe (see ``recipe.py``); ``lr``
    None keeps the recipe's own rate, and ``lr_scale`` multiplies every rate of it,
    the scheduler's included (the lr probes). ``step``, the project's step function,
    replaces the loop's body (see ``step_loop.py``)."""
    evidence = Evidence(
        device=device, dtype=dtype or "float32", lr=lr or 0.0, max_steps=max_steps
    )
    run = TrainingRun(evidence, model_factory, batch_factory, loss_fn,
                      optimizer_factory, lr, lr_scale, target_loss, target_ratio,
                      timeout, on_step, step, accumulate, train_mode,
                      stop_early)  # fmt: skip
    with deterministic(seed):
        try:
            _train(run)
            settle_confirmed_pass(evidence)
        except (Exception, SystemExit) as error:
            if confirming(evidence):  # the target was reached; the extra steps are
                settle_confirmed_pass(evidence)  # the gate's check, not the project's
            else:
                observers.record_error(run, error)
        finally:
            evidence.seconds = time.perf_counter() - run.started
            restore_cpu_threads(run.threads)
            if keep_model is not None and run.model is not None:
                keep_model.append(run.model)
            run.model = run.batch = run.trace = None
            if evidence.cuda_error:
                release_cuda_memory(device)
    return evidence


def _train(run: TrainingRun) -> None:
    """The textbook loop; instruments observe it at step 0 and when a loss or a
    gradient goes non-finite."""
    evidence = run.evidence
    model = setup.build_model(run)
    setup.build_batch(run)
    recipe = setup.build_recipe(run)
    optimizer = recipe.optimizer
    observers.record_optimizer_coverage(run, optimizer)
    if run.step is not None:
        return step_loop.train_with_step(run, recipe, stops_after)
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    model.train()

    for step in range(evidence.max_steps + 1):
        loss = _first_forward(run) if step == 0 else _forward(run)
        value = loss.item()
        evidence.losses.append(value)
        if run.on_step is not None:
            run.on_step(step, value)
        if not math.isfinite(value):
            observers.record_nonfinite(run, loss)
            return
        if stops_after(run, step, value):
            _judge_in_eval_mode(run)
            return

        run.phase = "backward"
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        observers.observe_gradients(run, step, parameters)
        run.phase = "step"
        evidence.lrs.append(recipe.lr)
        optimizer.step()
        run.phase = "scheduler"
        recipe.step_scheduler(step, value)


def stops_after(run: TrainingRun, step: int, value: float) -> bool:
    """Whether the run ends after the finite loss ``value`` of ``step``: at its
    target, at max_steps, frozen in place, or out of time; under torch.distributed,
    when the ranks agree to (``ranks/agreement.py``)."""
    wants = _stops_after(run, step, value)
    if agreement.current is None:
        return wants
    must = step == run.evidence.max_steps or run.evidence.timed_out
    return agreement.current(wants, must)


def _stops_after(run: TrainingRun, step: int, value: float) -> bool:
    evidence = run.evidence
    if evidence.target is None:
        evidence.target = resolve_target(value, run.target_loss, run.target_ratio)
    if _done_at_target(run, step, value):
        return True
    if step == evidence.max_steps or _frozen_in_place(evidence):
        return True
    if run.stop_early is not None and run.stop_early(evidence.losses, evidence.target):
        return True
    if run.out_of_time():
        evidence.timed_out = True
        return True
    return False


def _judge_in_eval_mode(run: TrainingRun) -> None:
    """A run that stopped short with dropout active is judged by the batch's loss in
    eval mode: whether the model learned the batch, not how noisy training is."""
    evidence = run.evidence
    if evidence.reached or evidence.timed_out or not evidence.dropout:
        return
    if run.replay_from is not None:
        restore_random_state(run.replay_from)
    run.model.eval()
    try:
        # not run.forward(): under no_grad its check that the loss requires grad fails
        with torch.no_grad():
            loss = float(forward_loss(run.loss_fn, run.model, run.batch))
    except Exception:  # the project's forward: an error here is no evidence
        return
    finally:
        run.model.train()
    accept_eval_loss(evidence, loss)


def accept_eval_loss(evidence: Evidence, loss: float) -> None:
    """Record the batch's eval-mode loss of a run that stopped short; at or below
    the target, the batch was memorized."""
    evidence.eval_loss = loss
    if evidence.target is not None and loss <= evidence.target:
        evidence.reached, evidence.reached_at = True, evidence.steps


def _first_forward(run: TrainingRun) -> Any:
    """The traced first forward; when the objective drew random numbers outside every
    module (noise, timesteps, samples of its own), every later step replays the same
    draws, so that on one batch the objective is one function that can be memorized.
    Randomness inside modules (dropout, noise a layer adds) is not replayed."""
    state = random_state()
    loss = observers.traced_forward(run)
    if run.trace is not None and run.trace.draws_outside_modules:
        run.evidence.replayed_draws = True
        run.replay_from = state
    return loss


def _forward(run: TrainingRun) -> Any:
    if run.replay_from is not None:
        restore_random_state(run.replay_from)
    return run.forward()


def _frozen_in_place(evidence: Evidence) -> bool:
    """The loss has not changed by a single bit in STALL_STEPS updates: on one fixed
    batch nothing trains (an lr of 0, a warmup that never starts), and more steps
    would only cost time."""
    recent = evidence.losses[-STALL_STEPS - 1 :]
    return len(recent) > STALL_STEPS and len(set(recent)) == 1


def _done_at_target(run: TrainingRun, step: int, value: float) -> bool:
    """Whether the run ends at its target. Most losses are bounded below by 0, so a
    loss that reaches its target trains on before it passes: below zero,
    BOUND_CHECK_STEPS more, to tell a level from a fall without bound; above zero,
    as many steps as it took (at most BOUND_CHECK_STEPS), to see that it does not
    fall through zero next. A target set below zero says negative losses are fine,
    not that a fall without bound is: a loss that reaches it trains on as well."""
    evidence = run.evidence
    negative_allowed = run.target_loss is not None and run.target_loss < 0
    if evidence.bound_check_from is not None:
        return step >= evidence.bound_check_from + BOUND_CHECK_STEPS
    if evidence.reached_at is not None:  # confirming a pass above zero
        if value < 0 and not negative_allowed:
            evidence.bound_check_from = step
            return False
        return step >= evidence.reached_at + _confirm_steps(evidence.reached_at)
    if value > evidence.target:
        return False
    evidence.reached, evidence.reached_at = True, step
    if value < 0:  # a negative target too: reached while still falling is no bound
        evidence.bound_check_from = step
        return False
    if negative_allowed:
        return True
    return _confirm_steps(step) == 0


def _confirm_steps(reached_at: int) -> int:
    return min(BOUND_CHECK_STEPS, reached_at)


def confirming(evidence: Evidence) -> bool:
    """The loss reached its target above zero and has not fallen below zero since."""
    return evidence.reached_at is not None and evidence.bound_check_from is None


def settle_confirmed_pass(evidence: Evidence) -> None:
    """A pass above zero that stayed above zero is the pass at the step it reached
    its target: the steps that confirmed it are dropped from the record."""
    if not confirming(evidence):
        return
    end = evidence.reached_at
    del evidence.losses[end + 1 :]
    del evidence.lrs[end:]
    del evidence.grad_norms[end:]
    evidence.timed_out = False


def resolve_target(
    initial: float, target_loss: float | None, target_ratio: float | None
) -> float:
    """The absolute loss to reach: the stricter of ``target_loss`` and
    ``target_ratio`` times the initial loss."""
    targets = [] if target_loss is None else [target_loss]
    if target_ratio is not None:
        if initial <= 0:
            raise ProjectProblem(
                "target-ratio-undefined",
                f"the initial loss is {initial:.4g}, so a target-ratio of it means"
                " nothing; set an absolute target-loss instead",
                config_key="target-ratio",
            )
        targets.append(initial * target_ratio)
    if not targets:
        raise ProjectProblem(
            "no-target", "set target-loss or target-ratio", config_key="target-loss"
        )
    return min(targets)
