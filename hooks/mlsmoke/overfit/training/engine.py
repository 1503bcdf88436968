"""The memorization loop: train a model on one batch until the loss reaches its target.

:func:`train` is a textbook PyTorch loop. What it observes goes into an
:class:`~mlsmoke.overfit.training.evidence.Evidence`; the instruments that observe
it live in ``instruments.py`` and are called at a few fixed points. It never raises
for the project's errors: they are recorded, with the phase they happened in, for the
diagnoses.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.training import bookkeeping, instruments, inventory
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.device import (
    batch_to,
    classify_cuda_error,
    limit_cpu_threads,
    memory_figures,
    model_to,
    release_cuda_memory,
    restore_cpu_threads,
    tensors_in,
)
from mlsmoke.overfit.training.evidence import OUT_OF_MEMORY, Evidence, ProjectProblem
from mlsmoke.overfit.training.recipe import Recipe, as_recipe
from mlsmoke.overfit.training.objective import (
    call_model,
    check_loss,
    default_loss,
    describe,
)

StepCallback = Callable[[int, float], None]
# Steps a loss that reached its target below zero trains on, to show a bound.
BOUND_CHECK_STEPS = 20
# Updates after which a loss that never changed stops the run.
STALL_STEPS = 20


@dataclass
class _Run:
    """One call of train(): what it was given, where it is, and what it holds."""

    evidence: Evidence
    model_factory: Callable[[], Any]
    batch_factory: Callable[[], Any]
    loss_fn: Callable[[Any, Any], Any] | None
    optimizer_factory: Callable[[Any, float | None], Any]
    lr: float | None
    lr_scale: float
    target_loss: float | None
    target_ratio: float | None
    timeout: float
    on_step: StepCallback | None
    phase: str = "model"  # read when something raises
    started: float = field(default_factory=time.perf_counter)
    model: Any = None
    batch: Any = None
    trace: instruments.ModuleTrace | None = None
    threads: int | None = None

    def forward(self) -> torch.Tensor:
        self.phase = "forward"
        if self.loss_fn is not None:
            return check_loss(self.loss_fn(self.model, self.batch), from_callable=True)
        output = call_model(self.model, self.batch)
        self.phase = "loss"
        return check_loss(default_loss(output), from_callable=False)

    def out_of_time(self) -> bool:
        return time.perf_counter() - self.started > self.timeout


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
) -> Evidence:
    """Train a fresh model on one batch; stop at the target, at ``max_steps`` updates,
    at ``timeout`` seconds, at a non-finite loss, or at the first error.

    ``optimizer_factory(model, lr)`` gives the recipe (see ``recipe.py``); ``lr``
    None keeps the recipe's own rate, and ``lr_scale`` multiplies every rate of it,
    the scheduler's included (the lr probes)."""
    evidence = Evidence(
        device=device, dtype=dtype or "float32", lr=lr or 0.0, max_steps=max_steps
    )
    run = _Run(evidence, model_factory, batch_factory, loss_fn, optimizer_factory,
               lr, lr_scale, target_loss, target_ratio, timeout, on_step)  # fmt: skip
    with deterministic(seed):
        try:
            _train(run)
        except (Exception, SystemExit) as error:
            _record_error(run, error)
        finally:
            evidence.seconds = time.perf_counter() - run.started
            restore_cpu_threads(run.threads)
            run.model = run.batch = run.trace = None
            if evidence.cuda_error:
                release_cuda_memory(device)
    return evidence


def _train(run: _Run) -> None:
    """The textbook loop; instruments observe it at step 0 and when a loss or a
    gradient goes non-finite."""
    evidence = run.evidence
    model = _build_model(run)
    _build_batch(run)
    recipe = _build_recipe(run)
    optimizer = recipe.optimizer
    _record_optimizer_coverage(run, optimizer)
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    model.train()

    for step in range(evidence.max_steps + 1):
        loss = _traced_forward(run) if step == 0 else run.forward()
        value = loss.item()
        evidence.losses.append(value)
        if run.on_step is not None:
            run.on_step(step, value)
        if not math.isfinite(value):
            _record_nonfinite(run, loss)
            return
        if evidence.target is None:
            evidence.target = resolve_target(value, run.target_loss, run.target_ratio)
        if _done_at_target(run, step, value):
            return
        if step == evidence.max_steps or _frozen_in_place(evidence):
            return
        if run.out_of_time():
            evidence.timed_out = True
            return

        run.phase = "backward"
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        _observe_gradients(run, step, parameters)
        run.phase = "step"
        evidence.lrs.append(recipe.lr)
        optimizer.step()
        recipe.step_scheduler(step, value)


def _build_recipe(run: _Run) -> Recipe:
    """The optimizer and scheduler, scaled for a probe; the evidence records where
    they came from and the lr they start at."""
    run.phase = "optimizer"
    recipe = as_recipe(run.optimizer_factory(run.model, run.lr), "the optimizer")
    recipe.scale_lr(run.lr_scale)
    evidence = run.evidence
    evidence.lr, evidence.lr_scale = recipe.lr, run.lr_scale
    evidence.optimizer = type(recipe.optimizer).__name__
    evidence.optimizer_source, evidence.scheduler = recipe.source, recipe.scheduler_name
    evidence.unscheduled_lr = recipe.optimizer.param_groups[0].get("initial_lr")
    return recipe


def _frozen_in_place(evidence: Evidence) -> bool:
    """The loss has not changed by a single bit in STALL_STEPS updates: on one fixed
    batch nothing trains (an lr of 0, a warmup that never starts), and more steps
    would only cost time."""
    recent = evidence.losses[-STALL_STEPS - 1 :]
    return len(recent) > STALL_STEPS and len(set(recent)) == 1


def _done_at_target(run: _Run, step: int, value: float) -> bool:
    """Whether the run ends at its target. A loss that reaches it below zero, with no
    target set below zero, trains BOUND_CHECK_STEPS more: most losses are bounded
    below by 0, and only the curve after tells a level from a fall without bound."""
    evidence = run.evidence
    if evidence.bound_check_from is not None:
        return step >= evidence.bound_check_from + BOUND_CHECK_STEPS
    if value > evidence.target:
        return False
    evidence.reached = True
    negative_allowed = run.target_loss is not None and run.target_loss < 0
    if value >= 0 or negative_allowed:
        return True
    evidence.bound_check_from = step
    return False


def _traced_forward(run: _Run) -> torch.Tensor:
    """The first forward pass, under hooks that record each module's input shapes
    and the order they ran in (``run.trace`` also names the module that raised)."""
    with instruments.traced_modules(run.model) as run.trace:
        loss = run.forward()
    run.evidence.module_inputs = run.trace.inputs
    run.evidence.module_order = run.trace.order
    run.evidence.module_none_arguments = run.trace.none_arguments
    _record_unregistered(run, loss)
    return loss


def _record_optimizer_coverage(run: _Run, optimizer: Any) -> None:
    """Which of the model's parameters the optimizer lacks, and what else it holds."""
    try:  # an instrument's failure must never pass for the project's error
        found = bookkeeping.optimizer_coverage(run.model, optimizer, run.batch)
    except Exception:
        return
    run.evidence.optimizer_missing, run.evidence.optimizer_extra = found


def _record_unregistered(run: _Run, loss: torch.Tensor) -> None:
    """The trainable leaves of the first loss's graph that the model does not own."""
    try:
        found = bookkeeping.unregistered_leaves(loss, run.model, run.batch)
    except Exception:
        return
    run.evidence.unregistered = found


def _observe_gradients(run: _Run, step: int, parameters: list) -> None:
    """The total gradient norm at every step, each parameter's at the first, and the
    first parameter whose gradient went non-finite."""
    evidence = run.evidence
    evidence.grad_norms.append(instruments.total_grad_norm(parameters))
    if step == 0:
        evidence.first_grads = instruments.gradient_norms(run.model)
    if not math.isfinite(evidence.grad_norms[-1]):
        evidence.first_nonfinite_grad = evidence.first_nonfinite_grad or (
            instruments.first_nonfinite_grad(run.model)
        )


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


def _build_model(run: _Run) -> torch.nn.Module:
    run.phase = "model"
    evidence = run.evidence
    model = run.model_factory()
    if not isinstance(model, torch.nn.Module):
        raise ProjectProblem(
            "not-a-module",
            f"the model callable returned {describe(model)}, not a torch.nn.Module",
            config_key="model",
        )
    evidence.requires_grad = instruments.requires_grad(model)
    if not evidence.requires_grad:
        _no_parameters(run, model)
    evidence.forward_parameters = inventory.forward_parameters(model)  # never raises
    run.model = model_to(model, evidence.device, _dtype(evidence))
    parameter_count = sum(p.numel() for p in model.parameters())
    run.threads = limit_cpu_threads(evidence.device, parameter_count)
    return run.model


def _no_parameters(run: _Run, model: torch.nn.Module) -> None:
    """Raise for a model without parameters: the project's bug when it keeps trainable
    tensors in plain attributes (a list of layers), else its configuration's."""
    try:
        run.evidence.unregistered = bookkeeping.attribute_parameters(model)
    except Exception:
        pass
    raise ProjectProblem(
        "no-parameters",
        f"the model ({type(model).__name__}) has no parameters to train",
        config_key=None if run.evidence.unregistered else "model",
    )


def _build_batch(run: _Run) -> Any:
    run.phase = "batch"
    evidence = run.evidence
    batch = run.batch_factory()
    evidence.batch_fields = inventory.safe_inventory(batch)
    tensors = tensors_in(batch)
    if not tensors:
        raise ProjectProblem(
            "batch-no-tensors",
            f"the batch holds no tensors: it is {describe(batch)}; return tensors"
            " (a tensor, a tuple or list, or a mapping of tensors)",
        )
    if tensors[0].dim() > 0:
        evidence.batch_size = int(tensors[0].shape[0])
    dtype = _dtype(evidence)
    run.batch = batch_to(
        batch, evidence.device, None if dtype == torch.float32 else dtype
    )
    return run.batch


def _dtype(evidence: Evidence) -> torch.dtype:
    return getattr(torch, evidence.dtype)


def _record_nonfinite(run: _Run, loss: torch.Tensor) -> None:
    """Name the first module whose output, and the parameter whose gradient, went
    non-finite; the loop stops after this."""
    evidence = run.evidence
    try:
        run.model.zero_grad(set_to_none=True)
        loss.backward()
        evidence.first_nonfinite_grad = evidence.first_nonfinite_grad or (
            instruments.first_nonfinite_grad(run.model)
        )
    except RuntimeError:
        pass
    replay = instruments.replay_forward(run.model, run.forward)
    evidence.first_nonfinite_output = replay.first_nonfinite


def _record_error(run: _Run, error: BaseException) -> None:
    evidence = run.evidence
    evidence.error, evidence.phase = error, run.phase
    evidence.cuda_error = classify_cuda_error(error)
    if evidence.cuda_error == OUT_OF_MEMORY:
        evidence.memory = memory_figures(evidence.device)
    if not isinstance(error, ProjectProblem):
        evidence.user_traceback = instruments.user_traceback(error)
    if run.phase not in ("forward", "loss") or evidence.cuda_error is not None:
        return
    trace = run.trace
    if trace is None or evidence.losses:  # past step 0: replay to find the module
        trace = instruments.replay_forward(run.model, run.forward)
    evidence.failed_module = trace.failed
    evidence.module_inputs = evidence.module_inputs or trace.inputs
    evidence.module_order = evidence.module_order or trace.order
    evidence.module_none_arguments = (
        evidence.module_none_arguments or trace.none_arguments
    )
    if run.loss_fn is not None and trace.failed is None:
        evidence.phase = "loss"
