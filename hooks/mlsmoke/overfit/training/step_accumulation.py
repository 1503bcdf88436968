"""An accumulating step's update against one fresh gradient: accumulating N
micro-batches without dividing their losses applies N times the batch's gradient."""

from __future__ import annotations

import math

import torch

from mlsmoke.overfit.training.run_state import TrainingRun


def update_ratio(run: TrainingRun, parameters: list[torch.Tensor]) -> float | None:
    """The accumulated gradients projected on one fresh gradient of the gate's loss
    on the same batch, relative to it; None when the gate cannot compute it."""
    with_grad = [p for p in parameters if p.grad is not None]
    fresh = _fresh_gradient(run, with_grad)
    if fresh is None:
        return None
    dot = sum(float((p.grad.float() * g.float()).sum())
              for p, g in zip(with_grad, fresh) if g is not None)  # fmt: skip
    norm = sum(float(g.float().pow(2).sum()) for g in fresh if g is not None)
    if not norm or not math.isfinite(dot):
        return None
    return dot / norm


def _fresh_gradient(run: TrainingRun, parameters: list[torch.Tensor]) -> list | None:
    """The gradient of the gate's own loss on the batch, the model's state and the
    random streams left as they were."""
    model = run.model
    buffers = [b.detach().clone() for b in model.buffers()]
    phase = run.phase
    try:
        with torch.random.fork_rng(devices=[]), torch.enable_grad():
            loss = run.forward()
            return list(torch.autograd.grad(loss, parameters, allow_unused=True))
    except Exception:
        return None
    finally:
        run.phase = phase
        with torch.no_grad():
            for buffer, saved in zip(model.buffers(), buffers):
                buffer.copy_(saved)
