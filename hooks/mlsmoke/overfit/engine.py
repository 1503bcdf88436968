"""The memorization loop: train a model on one batch until the loss reaches its target.

:func:`train` is a textbook PyTorch loop. What it observes goes into an
:class:`~mlsmoke.overfit.evidence.Evidence`; the instruments that observe it live in
``instruments.py`` and are called at a few fixed points. It never raises for the
project's errors: they are recorded, with the phase they happened in, for the diagnoses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit import instruments
from mlsmoke.overfit.determinism import deterministic
from mlsmoke.overfit.device import (
    batch_to,
    classify_cuda_error,
    limit_cpu_threads,
    memory_figures,
    model_to,
    release_cuda_memory,
    restore_cpu_threads,
    tensors_in,
)
from mlsmoke.overfit.evidence import OUT_OF_MEMORY, Evidence, ProjectProblem
from mlsmoke.overfit.objective import call_model, check_loss, default_loss, describe

StepCallback = Callable[[int, float], None]


class _Phase:
    """Where the run is; read when something raises."""

    def __init__(self) -> None:
        self.name = "model"


def train(
    model_factory: Callable[[], Any],
    batch_factory: Callable[[], Any],
    loss_fn: Callable[[Any, Any], Any] | None,
    optimizer_factory: Callable[[list, float | None], torch.optim.Optimizer],
    *,
    lr: float | None,
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
    at ``timeout`` seconds, at a non-finite loss, or at the first error."""
    evidence = Evidence(
        device=device, dtype=dtype or "float32", lr=lr or 0.0, max_steps=max_steps
    )
    phase = _Phase()
    started = time.perf_counter()
    state: dict[str, Any] = {}
    with deterministic(seed):
        try:
            _loop(
                evidence,
                phase,
                state,
                started,
                model_factory,
                batch_factory,
                loss_fn,
                optimizer_factory,
                lr,
                target_loss,
                target_ratio,
                timeout,
                on_step,
            )
        except (Exception, SystemExit) as error:
            _record_error(evidence, phase.name, error, state, loss_fn)
        finally:
            evidence.seconds = time.perf_counter() - started
            restore_cpu_threads(state.get("threads"))
            state.clear()
            if evidence.cuda_error:
                release_cuda_memory(device)
    return evidence


def _loop(
    evidence: Evidence,
    phase: _Phase,
    state: dict[str, Any],
    started: float,
    model_factory: Callable[[], Any],
    batch_factory: Callable[[], Any],
    loss_fn: Callable[[Any, Any], Any] | None,
    optimizer_factory: Callable[[list, float | None], torch.optim.Optimizer],
    lr: float | None,
    target_loss: float | None,
    target_ratio: float | None,
    timeout: float,
    on_step: StepCallback | None,
) -> None:
    dtype = getattr(torch, evidence.dtype)
    phase.name = "model"
    model = state["model"] = _build_model(model_factory, evidence, dtype)
    state["threads"] = limit_cpu_threads(evidence.device, evidence.parameter_count)
    phase.name = "batch"
    batch = state["batch"] = _build_batch(batch_factory, evidence, dtype)
    phase.name = "optimizer"
    optimizer = optimizer_factory(list(model.parameters()), lr)
    evidence.lr = float(optimizer.param_groups[0]["lr"])
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    model.train()

    def forward() -> torch.Tensor:
        return _forward_loss(model, batch, loss_fn, phase)

    for step in range(evidence.max_steps + 1):
        if step == 0:
            with instruments.traced_modules(model) as trace:
                state["trace"] = trace
                loss = forward()
            evidence.module_inputs, evidence.module_order = trace.inputs, trace.order
        else:
            loss = forward()
        value = loss.item()
        evidence.losses.append(value)
        if on_step is not None:
            on_step(step, value)
        if not math.isfinite(value):
            _record_nonfinite(evidence, model, forward, loss)
            return
        if evidence.target is None:
            evidence.target = resolve_target(value, target_loss, target_ratio)
        if value <= evidence.target:
            evidence.reached = True
            return
        if step == evidence.max_steps:
            return
        if time.perf_counter() - started > timeout:
            evidence.timed_out = True
            return

        phase.name = "backward"
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        evidence.grad_norms.append(instruments.total_grad_norm(parameters))
        if step == 0:
            evidence.first_grads = instruments.gradient_norms(model)
        if not math.isfinite(evidence.grad_norms[-1]):
            evidence.first_nonfinite_grad = evidence.first_nonfinite_grad or (
                instruments.first_nonfinite_grad(model)
            )
        phase.name = "step"
        optimizer.step()


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


def _build_model(
    model_factory: Callable[[], Any], evidence: Evidence, dtype: torch.dtype
) -> torch.nn.Module:
    model = model_factory()
    if not isinstance(model, torch.nn.Module):
        raise ProjectProblem(
            "not-a-module",
            f"the model callable returned {describe(model)}, not a torch.nn.Module",
            config_key="model",
        )
    evidence.requires_grad = instruments.requires_grad(model)
    evidence.parameter_count = sum(p.numel() for p in model.parameters())
    if not evidence.requires_grad:
        raise ProjectProblem(
            "no-parameters",
            f"the model ({type(model).__name__}) has no parameters to train",
            config_key="model",
        )
    return model_to(model, evidence.device, dtype)


def _build_batch(
    batch_factory: Callable[[], Any], evidence: Evidence, dtype: torch.dtype
) -> Any:
    batch = batch_factory()
    tensors = tensors_in(batch)
    if not tensors:
        raise ProjectProblem(
            "batch-no-tensors",
            f"the batch holds no tensors: it is {describe(batch)}; return tensors"
            " (a tensor, a tuple or list, or a mapping of tensors)",
        )
    if tensors[0].dim() > 0:
        evidence.batch_size = int(tensors[0].shape[0])
    cast = dtype if dtype != torch.float32 else None
    return batch_to(batch, evidence.device, cast)


def _forward_loss(
    model: torch.nn.Module,
    batch: Any,
    loss_fn: Callable[[Any, Any], Any] | None,
    phase: _Phase,
) -> torch.Tensor:
    phase.name = "forward"
    if loss_fn is not None:
        return check_loss(loss_fn(model, batch), from_callable=True)
    output = call_model(model, batch)
    phase.name = "loss"
    return check_loss(default_loss(output), from_callable=False)


def _record_nonfinite(
    evidence: Evidence, model: torch.nn.Module, forward: Callable, loss: torch.Tensor
) -> None:
    """Name the first module whose output, and the parameter whose gradient, went
    non-finite; the loop stops after this."""
    try:
        model.zero_grad(set_to_none=True)
        loss.backward()
        evidence.first_nonfinite_grad = evidence.first_nonfinite_grad or (
            instruments.first_nonfinite_grad(model)
        )
    except RuntimeError:
        pass
    evidence.first_nonfinite_output = instruments.replay_forward(
        model, forward
    ).first_nonfinite


def _record_error(
    evidence: Evidence,
    phase: str,
    error: BaseException,
    state: dict[str, Any],
    loss_fn: Callable[[Any, Any], Any] | None,
) -> None:
    evidence.error, evidence.phase = error, phase
    evidence.cuda_error = classify_cuda_error(error)
    if evidence.cuda_error == OUT_OF_MEMORY:
        evidence.memory = memory_figures(evidence.device)
    if not isinstance(error, ProjectProblem):
        evidence.user_traceback = instruments.user_traceback(error)
    if phase in ("forward", "loss") and evidence.cuda_error is None:
        trace = state.get("trace")
        if trace is None or evidence.losses:  # past step 0: replay to find the module
            model, batch = state["model"], state["batch"]
            trace = instruments.replay_forward(
                model, lambda: _forward_loss(model, batch, loss_fn, _Phase())
            )
        evidence.failed_module = trace.failed
        evidence.module_inputs = evidence.module_inputs or trace.inputs
        evidence.module_order = evidence.module_order or trace.order
        if loss_fn is not None and trace.failed is None:
            evidence.phase = "loss"
