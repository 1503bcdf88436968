"""Bounded probes the diagnoses run to tell causes apart.

A probe is another short training run (another lr, float64, the CPU) or one forward
pass of a fresh model on a fresh batch. Every probe is memoized per gate run, so that
diagnoses asking the same question share one answer, and the lr sweeps stop at the first
learning rate that memorizes: a failing gate costs at most a few times its own run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from mlsmoke.overfit.determinism import deterministic
from mlsmoke.overfit.device import batch_to, map_tensors, placement
from mlsmoke.overfit.evidence import Evidence, GateRun
from mlsmoke.overfit.objective import call_model, default_loss

LOWER_LR_FACTORS = (0.1, 0.01)
HIGHER_LR_FACTORS = (10.0, 100.0)
MIN_PROBE_SECONDS = 5.0

_MEMO: dict[int, tuple[GateRun, dict[Any, Any]]] = {}


def _memo(run: GateRun) -> dict[Any, Any]:
    entry = _MEMO.get(id(run))
    if entry is None or entry[0] is not run:
        _MEMO.clear()  # one gate is diagnosed at a time; drop the previous one's
        entry = _MEMO[id(run)] = (run, {})
    return entry[1]


def _remember(run: GateRun, key: Any, compute: Callable[[], Any]) -> Any:
    memo = _memo(run)
    if key not in memo:
        memo[key] = compute()
    return memo[key]


# --- training probes ------------------------------------------------------------------


def may_probe(run: GateRun) -> bool:
    """Whether training probes fit the budget: not after a run that hit its timeout."""
    return not run.evidence.timed_out and run.evidence.lr > 0


def probe_timeout(run: GateRun) -> float:
    """Seconds one probe may take: twice the run's own time (a float64 step costs about
    two float32 ones), never more than the gate's timeout."""
    return min(run.settings.timeout, max(2 * run.evidence.seconds, MIN_PROBE_SECONDS))


def at_lr(run: GateRun, lr: float) -> Evidence:
    """The same run at another learning rate (same steps, same target)."""
    return _remember(
        run, ("lr", lr), lambda: run.probe(lr=lr, timeout=probe_timeout(run))
    )


def lr_sweep(run: GateRun, factors: tuple[float, ...]) -> list[Evidence]:
    """Probes at ``lr * factor`` for each factor in turn, up to the first that
    memorizes; the probes run, in order."""
    probes = []
    if not may_probe(run):
        return probes
    for factor in factors:
        probe = at_lr(run, run.evidence.lr * factor)
        probes.append(probe)
        if probe.reached and probe.error is None:
            break
    return probes


def memorizing_probe(probes: list[Evidence]) -> Evidence | None:
    return next((p for p in probes if p.reached and p.error is None), None)


def in_float64(run: GateRun) -> Evidence:
    """The same run in float64: a precision problem disappears there."""
    return _remember(
        run,
        "float64",
        lambda: run.probe(dtype="float64", timeout=probe_timeout(run), **_targets(run)),
    )


def _targets(run: GateRun) -> dict[str, float | None]:
    """The main run's target; the configured ones when it never resolved (a loss that
    was not finite at init)."""
    if run.evidence.target is not None:
        return {}
    return {
        "target_loss": run.settings.target_loss,
        "target_ratio": run.settings.target_ratio,
    }


def on_cpu(run: GateRun) -> Evidence:
    """The same run on the CPU, where a device-side error raises at its real line."""
    return _remember(run, "cpu", lambda: run.probe(device="cpu", max_steps=1))


def without_target(run: GateRun, steps: int) -> Evidence:
    """A short run that no target stops: where does the loss go by itself?"""
    return _remember(
        run,
        ("free", steps),
        lambda: run.probe(
            max_steps=steps,
            target_loss=float("-inf"),
            target_ratio=None,
            timeout=probe_timeout(run),
        ),
    )


def describe_lr_result(probe: Evidence) -> str:
    if probe.error is not None:
        return f"at lr {probe.lr:g}: raised {type(probe.error).__name__}"
    losses = probe.losses
    if probe.reached:
        return f"at lr {probe.lr:g}: memorized in {probe.steps} steps"
    if losses and not math.isfinite(losses[-1]):
        return f"at lr {probe.lr:g}: the loss became {losses[-1]} at step {probe.steps}"
    return (
        f"at lr {probe.lr:g}: loss {losses[0]:.4g} -> {losses[-1]:.4g}"
        f" in {probe.steps} steps"
    )


# --- fresh model and batch ------------------------------------------------------------


@contextmanager
def seeded(run: GateRun) -> Iterator[None]:
    with deterministic(run.settings.seed):
        yield


def fresh_batch(run: GateRun) -> Any:
    """The batch factory's batch, built under the gate's seed."""
    with seeded(run):
        return run.batch_factory()


def batch_fields(batch: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` per field: mapping keys, tuple positions, or ``batch``."""
    if isinstance(batch, dict) or (hasattr(batch, "keys") and hasattr(batch, "items")):
        return [(str(k), v) for k, v in batch.items()]
    if isinstance(batch, (tuple, list)):
        return [(f"batch[{i}]", v) for i, v in enumerate(batch)]
    return [("batch", batch)]


def describe_value(value: Any) -> str:
    """What a batch field holds, for a user reading a diagnosis."""
    if isinstance(value, torch.Tensor):
        text = f"{str(value.dtype).replace('torch.', '')} tensor {tuple(value.shape)}"
        if (
            value.numel()
            and not value.is_floating_point()
            and value.dtype != torch.bool
        ):
            text += f", values {int(value.min())}..{int(value.max())}"
        return text
    if isinstance(value, str):
        return f"a str ({value[:20]!r})"
    if isinstance(value, (list, tuple)):
        inner = describe_value(value[0]).split(" (")[0] if value else "nothing"
        return f"a {type(value).__name__} of {len(value)} ({inner}, ...)"
    return f"a {type(value).__name__}"


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

    return _remember(run, "sizes", build)


def forward_device(run: GateRun) -> str:
    """Where one-pass probes run: the gate's device, unless CUDA failed there."""
    return "cpu" if run.evidence.cuda_error else run.evidence.device


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


def capture_forward(run: GateRun) -> ForwardCapture | None:
    """A fresh model and batch, and what the model was called with and returned in eval
    mode; None when building them raises."""
    return _remember(run, "capture", lambda: _capture(run))


def _capture(run: GateRun) -> ForwardCapture | None:
    try:
        with seeded(run):
            model = run.model_factory().to(placement(forward_device(run)))
            batch = batch_to(run.batch_factory(), forward_device(run), None)
    except Exception:
        return None
    capture = ForwardCapture(model, batch)
    model.eval()
    try:  # what was recorded before a failure still tells the output sizes
        with seeded(run), torch.no_grad(), _recording(model, capture):
            _loss_of(run, model, batch)
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


def _loss_of(run: GateRun, model: torch.nn.Module, batch: Any) -> Any:
    if run.loss_fn is not None:
        return run.loss_fn(model, batch)
    return default_loss(call_model(model, batch))


def class_logits(capture: ForwardCapture) -> torch.Tensor | None:
    """The logits of a forward: in the model's output, or, for a model that returns only
    its loss, the output of its last linear layer."""
    found = logits_of(capture.output)
    if found is None and capture.last_linear_output is not None:
        found = capture.last_linear_output
    return found


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


def class_targets(batch: Any, logits: torch.Tensor) -> torch.Tensor | None:
    """The batch's class-index tensor for ``logits``: an integer tensor shaped like the
    logits without their class dimension, preferring the usual names, else the last."""
    expected = tuple(logits.shape[:-1])
    candidates = [
        (name, value)
        for name, value in batch_fields(batch)
        if isinstance(value, torch.Tensor)
        and not value.is_floating_point()
        and value.dtype != torch.bool
        and tuple(value.shape) == expected
    ]
    for name, value in candidates:
        if name in TARGET_NAMES:
            return value
    return candidates[-1][1] if candidates else None


def eval_outputs_differ(run: GateRun) -> bool:
    """Two identical eval-mode forward passes of one model give different losses."""

    def compare() -> bool:
        try:
            with seeded(run):
                model = run.model_factory().to(placement(forward_device(run)))
                batch = batch_to(run.batch_factory(), forward_device(run), None)
                model.eval()
                with torch.no_grad():
                    first = _as_tensor(_loss_of(run, model, batch))
                    second = _as_tensor(_loss_of(run, model, batch))
        except Exception:
            return False
        if first is None or second is None:
            return False
        return not torch.allclose(first, second, rtol=1e-5, atol=1e-7, equal_nan=True)

    return _remember(run, "eval-differ", compare)


def _as_tensor(value: Any) -> torch.Tensor | None:
    return value.detach().float() if isinstance(value, torch.Tensor) else None


def differing_batch_field(run: GateRun) -> str | None:
    """The first field that differs between two calls of the batch factory under the
    same seed, or None when they agree."""

    def compare() -> str | None:
        try:
            first, second = fresh_batch(run), fresh_batch(run)
        except Exception:
            return None
        for (name, a), (_, b) in zip(batch_fields(first), batch_fields(second)):
            if not _same(a, b):
                return name
        return None

    return _remember(run, "batch-differ", compare)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    flat_a, flat_b = [], []
    map_tensors(a, lambda t: flat_a.append(t) or t)
    map_tensors(b, lambda t: flat_b.append(t) or t)
    if flat_a or flat_b:
        return len(flat_a) == len(flat_b) and all(map(_same, flat_a, flat_b))
    return bool(a == b)


def nonfinite_origin(run: GateRun) -> str | None:
    """Where a fresh model's forward first makes a NaN or Inf: ``"module 'x'"`` when a
    module's own code turns finite inputs into a non-finite output (between its
    submodules, or in a leaf), ``"the batch"`` or ``"the loss"``; None if all is finite.
    """
    return _remember(run, "nonfinite-origin", lambda: _trace_nonfinite(run))


def _trace_nonfinite(run: GateRun) -> str | None:
    try:
        with seeded(run):
            model = run.model_factory().to(placement(forward_device(run)))
            batch = batch_to(run.batch_factory(), forward_device(run), None)
    except Exception:
        return None
    if any(_nonfinite(t) for t in _tensors(batch)):
        return "the batch"
    running: list[str] = []
    found: list[str] = []

    def before(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict) -> None:
            if not found and any(_nonfinite(t) for t in _tensors((args, kwargs))):
                found.append(running[-1] if running else "")
            running.append(name)

        return hook

    def after(name: str) -> Callable:
        def hook(module: Any, args: tuple, kwargs: dict, output: Any) -> None:
            if running and running[-1] == name:
                running.pop()
            if not found and any(_nonfinite(t) for t in _tensors(output)):
                found.append(name)

        return hook

    handles = []
    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(name), with_kwargs=True))
        handles.append(module.register_forward_hook(after(name), with_kwargs=True))
    try:
        with seeded(run), torch.no_grad():
            loss = _loss_of(run, model, batch)
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


def _tensors(obj: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    map_tensors(obj, lambda t: found.append(t) or t)
    return found


def _nonfinite(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())
