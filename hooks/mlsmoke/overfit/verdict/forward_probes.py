"""One-pass probes: a fresh model on a fresh batch, called as the gate calls it, with
no training. Its output and logits, its targets, whether eval mode is deterministic,
where a NaN first appears, and the size of each parameter."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.nn import functional as F

from mlsmoke.overfit.training.batch_objects import tensors_in
from mlsmoke.overfit.training.device import batch_to, placement
from mlsmoke.overfit.training.objective import forward_loss
from mlsmoke.overfit.verdict.batch_probes import batch_fields, seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


def parameter_sizes(run: GateRun) -> dict[str, int]:
    """Elements per named parameter, from a model built on the meta device when the
    factory allows it (no memory, no weights loaded)."""

    def build() -> dict[str, int]:
        try:
            with seeded(run), torch.device("meta"):
                model = run.model_factory()
        except Exception:
            with seeded(run):
                model = run.model_factory()
        return {name: p.numel() for name, p in model.named_parameters()}

    return remember(run, "sizes", build)


def forward_device(run: GateRun) -> str:
    """Where one-pass probes run: the gate's device, unless CUDA failed there."""
    return "cpu" if run.evidence.cuda_error else run.evidence.device


def fresh_model_and_batch(run: GateRun) -> tuple[torch.nn.Module, Any]:
    """A new model and batch from the factories, on the probes' device; called under
    ``seeded(run)`` so that they match the gate's own."""
    device = forward_device(run)
    model = run.model_factory().to(placement(device))
    return model, batch_to(run.batch_factory(), device, None)


@dataclass
class ForwardCapture:
    """One eval-mode forward of a fresh model on the gate's batch, called as the gate
    calls it."""

    model: torch.nn.Module
    batch: Any
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    last_layer_outputs: int | None = None  # size of the last leaf module's last dim
    last_linear_output: torch.Tensor | None = None  # for models that return only a loss
    loss: float | None = None  # the loss of this forward, as the gate computes it


def capture_forward(run: GateRun) -> ForwardCapture | None:
    """A fresh model and batch, and what the model was called with and returned in eval
    mode; None when building them raises."""
    return remember(run, "capture", lambda: _capture(run))


def _capture(run: GateRun) -> ForwardCapture | None:
    try:
        with seeded(run):
            model, batch = fresh_model_and_batch(run)
    except Exception:
        return None
    capture = ForwardCapture(model, batch)
    model.eval()
    try:  # what was recorded before a failure still tells the output sizes
        with seeded(run), torch.no_grad(), _recording(model, capture):
            loss = loss_of(run, model, batch)
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            capture.loss = float(loss.detach())
    except Exception:
        pass
    return capture


@contextmanager
def _recording(model: torch.nn.Module, capture: ForwardCapture) -> Iterator[None]:
    def on_call(module: Any, args: tuple, kwargs: dict, output: Any) -> None:
        if not capture.args and not capture.kwargs:
            capture.args, capture.kwargs, capture.output = args, kwargs, output

    def on_leaf(module: Any, args: tuple, output: Any) -> None:
        if isinstance(output, torch.Tensor) and output.dim() >= 2:
            capture.last_layer_outputs = int(output.shape[-1])
            if isinstance(module, torch.nn.Linear):
                capture.last_linear_output = output

    handles = [model.register_forward_hook(on_call, with_kwargs=True)]
    handles += [
        m.register_forward_hook(on_leaf)
        for m in model.modules()
        if not list(m.children())
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def loss_of(run: GateRun, model: torch.nn.Module, batch: Any) -> Any:
    """The loss of one call, as the gate computes it."""
    return forward_loss(run.loss_fn, model, batch)


def class_logits(capture: ForwardCapture) -> torch.Tensor | None:
    """The logits of a forward: in the model's output, or, for a model that returns only
    its loss, the output of its last linear layer."""
    found = logits_of(capture.output)
    if found is None and capture.last_linear_output is not None:
        found = capture.last_linear_output
    return None if found is None else sequence_shaped(found, capture.batch)


def sequence_shaped(logits: torch.Tensor, batch: Any) -> torch.Tensor:
    """``logits`` of shape (B*T, C), flattened over samples and positions as
    ``logits.view(-1, C)`` before a cross-entropy flattens them, in the shape
    (B, T, C) of the batch's (B, T) class targets; any other logits as they are."""
    if logits.dim() != 2 or class_targets(batch, logits) is not None:
        return logits
    rows = logits.shape[0]
    chosen = _target_field(
        batch,
        lambda value: value.dim() == 2
        and 1 < value.shape[1] < rows
        and value.shape[0] * value.shape[1] == rows,
    )
    return logits if chosen is None else logits.reshape(*chosen.shape, -1)


def _class_indices(value: Any) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and not value.is_floating_point()
        and value.dtype != torch.bool
    )


def logits_of(output: Any) -> torch.Tensor | None:
    """The per-sample output inside a model's output: the tensor itself, ``.logits``,
    or the first tensor of a tuple with a batch dimension."""
    if isinstance(output, torch.Tensor):
        return output if output.dim() >= 1 and output.numel() > 1 else None
    found = getattr(output, "logits", None)
    if found is None and isinstance(output, dict):
        found = output.get("logits")
    if isinstance(found, torch.Tensor):
        return found
    if isinstance(output, (tuple, list)):
        for item in output:
            if isinstance(item, torch.Tensor) and item.dim() >= 1 and item.numel() > 1:
                return item
    return None


TARGET_NAMES = ("labels", "label", "targets", "target", "y")
# How close a recomputed cross-entropy must be to the gate's loss to be the same.
CROSS_ENTROPY_RTOL, CROSS_ENTROPY_ATOL = 1e-3, 1e-4


def class_targets(batch: Any, logits: torch.Tensor) -> torch.Tensor | None:
    """The batch's class-index tensor for ``logits``: an integer tensor shaped like the
    logits without their class dimension, preferring the usual names, else the last."""
    expected = tuple(logits.shape[:-1])
    return _target_field(batch, lambda value: tuple(value.shape) == expected)


def _target_field(
    batch: Any, fits: Callable[[torch.Tensor], bool]
) -> torch.Tensor | None:
    """The batch's class-index field that ``fits``: the first of the usual target
    names, else the last."""
    candidates = [
        (name, value)
        for name, value in batch_fields(batch)
        if _class_indices(value) and fits(value)
    ]
    for name, value in candidates:
        if name in TARGET_NAMES:
            return value
    return candidates[-1][1] if candidates else None


def is_mean_cross_entropy(
    loss: float, logits: torch.Tensor, targets: torch.Tensor
) -> bool:
    """Whether ``loss`` is the mean cross-entropy of ``logits`` against the class
    ``targets`` (negative targets ignored), recomputed within float noise."""
    value = mean_cross_entropy(logits, targets)
    return value is not None and math.isclose(
        loss, value, rel_tol=CROSS_ENTROPY_RTOL, abs_tol=CROSS_ENTROPY_ATOL
    )


def mean_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> float | None:
    """The mean cross-entropy of ``logits`` against the class ``targets`` shaped like
    them without their class dimension, negative targets ignored; None when none is
    kept or the shapes differ."""
    kept = targets >= 0
    if targets.shape != logits.shape[:-1] or not bool(kept.any()):
        return None
    return float(F.cross_entropy(logits.detach().float()[kept], targets[kept].long()))


def eval_outputs_differ(run: GateRun) -> bool:
    """Two identical eval-mode forward passes of one model give different losses."""

    def compare() -> bool:
        try:
            with seeded(run):
                model, batch = fresh_model_and_batch(run)
                model.eval()
                with torch.no_grad():
                    first = _as_tensor(loss_of(run, model, batch))
                    second = _as_tensor(loss_of(run, model, batch))
        except Exception:
            return False
        if first is None or second is None:
            return False
        return not torch.allclose(first, second, rtol=1e-5, atol=1e-7, equal_nan=True)

    return remember(run, "eval-differ", compare)


def _as_tensor(value: Any) -> torch.Tensor | None:
    return value.detach().float() if isinstance(value, torch.Tensor) else None


def nonfinite_origin(run: GateRun) -> str | None:
    """Where a fresh model's forward first makes a NaN or Inf: ``"module 'x'"`` when a
    module's own code turns finite inputs into a non-finite output (between its
    submodules, or in a leaf), ``"the batch"`` or ``"the loss"``; None if all is finite.
    """
    return remember(run, "nonfinite-origin", lambda: _trace_nonfinite(run))


def _trace_nonfinite(run: GateRun) -> str | None:
    try:
        with seeded(run):
            model, batch = fresh_model_and_batch(run)
    except Exception:
        return None
    if any(_nonfinite(t) for t in tensors_in(batch)):
        return "the batch"
    running: list[str] = []
    found: list[str] = []

    def before(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict) -> None:
            if not found and any(_nonfinite(t) for t in tensors_in((args, kwargs))):
                found.append(running[-1] if running else "")
            running.append(name)

        return hook

    def after(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict, output: Any) -> None:
            if running and running[-1] == name:
                running.pop()
            if not found and any(_nonfinite(t) for t in tensors_in(output)):
                found.append(name)

        return hook

    handles = []
    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(name), with_kwargs=True))
        handles.append(module.register_forward_hook(after(name), with_kwargs=True))
    try:
        with seeded(run), torch.no_grad():
            loss = loss_of(run, model, batch)
    except Exception:
        return None
    finally:
        for handle in handles:
            handle.remove()
    if found:
        return f"module {found[0]!r}" if found[0] else "the model's own forward"
    if isinstance(loss, torch.Tensor) and _nonfinite(loss):
        return "the loss"
    return None


def _nonfinite(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())
