"""Probes along a batch's sequence: change the inputs from one position on and read
the model's eval-mode logits again, to see which outputs depend on later positions.

A model that reads prefixes (a causal language model) leaves every output before the
changed positions as it was; one that reads the whole sequence moves them.
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training.batch_objects import converted
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun


def trained_or_fresh(run: GateRun, capture: forward_probes.ForwardCapture) -> Any:
    """The model the gate trained (script mode keeps it): a fresh one's output may
    not yet depend on its inputs (a head initialized at zero)."""
    if run.trained_model is not None:
        try:
            return run.trained_model()
        except Exception:
            return None
    return capture.model


def eval_logits(
    run: GateRun, model: torch.nn.Module, batch: Any
) -> torch.Tensor | None:
    """The logits of one eval-mode call of ``model``, as the gate calls it."""
    outputs: list[Any] = []
    handle = model.register_forward_hook(lambda m, a, output: outputs.append(output))
    was_training = model.training
    model.eval()
    try:
        with seeded(run), torch.no_grad():
            forward_probes.loss_of(run, model, batch)
    except Exception:  # the model's own forward: no evidence either way
        return None
    finally:
        handle.remove()
        model.train(was_training)
    found = forward_probes.logits_of(outputs[0]) if outputs else None
    if found is None:
        return None
    return forward_probes.sequence_shaped(found, batch).detach().float()


def changed_after(batch: Any, fields: list[torch.Tensor], cut: int) -> Any:
    """``batch`` with every position from ``cut`` on of ``fields`` drawn anew from
    the values each field holds."""
    generator = torch.Generator().manual_seed(0)
    chosen = {id(tensor) for tensor in fields}

    def change(tensor: torch.Tensor) -> torch.Tensor:
        if id(tensor) not in chosen:
            return tensor
        changed = tensor.clone()
        later = changed[:, cut:]
        if tensor.is_floating_point():
            noise = torch.randn(later.shape, generator=generator)
            changed[:, cut:] = later + noise.to(later)
        else:
            low, high = int(tensor.min()), int(tensor.max())
            drawn = torch.randint(low, high + 1, later.shape, generator=generator)
            changed[:, cut:] = drawn.to(later)
        return changed

    return converted(batch, change, [])


def aligned(tensor: torch.Tensor, targets: torch.Tensor) -> bool:
    """``tensor`` has the targets' sample and position dimensions, (B, T, ...)."""
    return tensor.dim() >= 2 and tuple(tensor.shape[:2]) == tuple(targets.shape[:2])
