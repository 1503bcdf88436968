"""What the loop observes, beside it: the first forward's module trace, the
optimizer's and the loss graph's bookkeeping, gradient norms, and where a non-finite
value or an error came from. An instrument's own failure never passes for the
project's error."""

from __future__ import annotations

import warnings

import math
import os
from typing import Any

import torch

from mlsmoke.overfit.training import bookkeeping, instruments
from mlsmoke.overfit.training.device import (
    classify_cuda_error,
    memory_figures,
)
from mlsmoke.overfit.training.evidence import OUT_OF_MEMORY, ProjectProblem
from mlsmoke.overfit.training.run_state import TrainingRun


def traced_forward(run: TrainingRun) -> torch.Tensor:
    """The first forward pass, under hooks that record each module's input shapes
    and the order they ran in (``run.trace`` also names the module that raised)."""
    caught: list[warnings.WarningMessage] = []
    try:
        with instruments.traced_modules(run.model) as run.trace:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                loss = run.forward()
    finally:
        run.evidence.forward_warnings = replayed_warnings(caught)
    run.evidence.module_inputs = run.trace.inputs
    run.evidence.module_order = run.trace.order
    run.evidence.module_none_arguments = run.trace.none_arguments
    run.evidence.dropout = run.trace.dropout
    record_unregistered(run, loss)
    return loss


def replayed_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    """The first line of each warning the first forward and loss raised, once each;
    the warnings are issued again, so the project's output still shows them."""
    texts: list[str] = []
    for warning in caught:
        warnings.warn_explicit(
            warning.message, warning.category, warning.filename, warning.lineno
        )
        text = (str(warning.message).strip().splitlines() or [""])[0]
        if text and text not in texts:
            texts.append(text)
    return texts


def record_optimizer_coverage(run: TrainingRun, optimizer: Any) -> None:
    """Which of the model's parameters the optimizer lacks, and what else it holds."""
    try:  # an instrument's failure must never pass for the project's error
        found = bookkeeping.optimizer_coverage(run.model, optimizer, run.batch)
    except Exception:
        return
    run.evidence.optimizer_missing, run.evidence.optimizer_extra = found


def record_unregistered(run: TrainingRun, loss: torch.Tensor) -> None:
    """The trainable leaves of the first loss's graph that the model does not own."""
    try:
        found = bookkeeping.unregistered_leaves(loss, run.model, run.batch)
    except Exception:
        return
    run.evidence.unregistered = found


def observe_gradients(run: TrainingRun, step: int, parameters: list) -> None:
    """The total gradient norm at every step, each parameter's at the first, and the
    first parameter whose gradient went non-finite."""
    evidence = run.evidence
    evidence.grad_norms.append(instruments.total_grad_norm(parameters))
    if step == 0:
        evidence.first_grads = instruments.gradient_norms(run.model)
        evidence.never_got_gradient = [
            name
            for name, parameter in run.model.named_parameters()
            if parameter.requires_grad and evidence.first_grads.get(name) is None
        ]
    if not math.isfinite(evidence.grad_norms[-1]):
        evidence.first_nonfinite_grad = evidence.first_nonfinite_grad or (
            instruments.first_nonfinite_grad(run.model)
        )


def record_nonfinite(run: TrainingRun, loss: torch.Tensor) -> None:
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


def record_error(run: TrainingRun, error: BaseException) -> None:
    evidence = run.evidence
    evidence.error, evidence.phase = error, run.phase
    evidence.cuda_error = classify_cuda_error(error)
    if evidence.cuda_error == OUT_OF_MEMORY:
        evidence.memory = memory_figures(evidence.device)
    if not isinstance(error, ProjectProblem):
        evidence.user_traceback = instruments.user_traceback(error)
    evidence.working_directory = working_directory()
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


def working_directory() -> str | None:
    """The process's working directory; None when it was removed under it."""
    try:
        return os.getcwd()
    except OSError:
        return None
