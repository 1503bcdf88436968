"""``loss-mixes-samples``: the loss pairs one sample's outputs with another sample's
targets. The outputs and the targets were flattened in different orders (logits
transposed to time-major, then ``reshape(-1, C)``, against ``targets.view(-1)``): the
model is asked to predict other samples' tokens, and on one batch it can still
memorize them.

Found by intervention on a fresh model in eval mode: the gradient of the loss with
respect to the model's per-sample output (its logits) is taken, the targets of one
sample are changed to other classes, and the gradient taken again. A loss that pairs
each output with its own target moves only that sample's rows; rows of other samples
that move, well above the noise of two identical runs, are the evidence.
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training.batch_objects import converted
from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.checks.batch_mixing import moved, noise_floor
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "loss-mixes-samples"
HINT = (
    "flatten the outputs and the targets in the same order: logits.view(-1, C) with"
    " targets.view(-1), or permute both the same way (a transpose on one side only"
    " pairs each output with another sample's target)"
)


def check(run: GateRun) -> list[Warning]:
    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
    except Exception:
        return []
    model.eval()
    base = _output_gradient(run, model, batch)
    if base is None:
        return []
    grad, logits, targets = base
    samples = int(grad.shape[0])
    if samples < 2:
        return []
    again = _output_gradient(run, model, batch)
    if again is None or again[0].shape != grad.shape:
        return []
    floor = noise_floor(grad, again[0])
    changed = samples - 1
    other = _with_other_targets(batch, targets, changed, int(logits.shape[-1]))
    if other is None:
        return []
    moved_grad = _output_gradient(run, model, other)
    if moved_grad is None or moved_grad[0].shape != grad.shape:
        return []
    leaks = [i for i in range(samples - 1) if moved(moved_grad[0][i], grad[i], floor)]
    if not leaks:
        return []
    return [
        Warning(
            CODE,
            f"the loss pairs outputs of sample {leaks[0]} with the targets of sample"
            f" {changed}: changing only sample {changed}'s targets moves the loss's"
            f" gradient at {len(leaks)} other sample(s)' outputs; {HINT}",
        )
    ]


def _output_gradient(
    run: GateRun, model: torch.nn.Module, batch: Any
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """The loss's gradient at the model's logits, the logits, and the batch's class
    targets for them; None when the model's output holds no logits the loss used."""
    captured: dict[str, Any] = {}

    def keep(module: Any, args: tuple, output: Any) -> None:
        captured.setdefault("output", output)

    handle = model.register_forward_hook(keep)
    try:
        with seeded(run), torch.enable_grad():
            loss = forward_probes.loss_of(run, model, batch)
            logits = forward_probes.logits_of(captured.get("output"))
            if logits is None or not isinstance(loss, torch.Tensor):
                return None
            targets = forward_probes.class_targets(batch, logits)
            if targets is None or logits.dim() < 2 or not logits.requires_grad:
                return None
            (grad,) = torch.autograd.grad(loss, logits, allow_unused=True)
    except Exception:  # the project's forward: no evidence either way
        return None
    finally:
        handle.remove()
    if grad is None:
        return None
    return grad.detach(), logits.detach(), targets


def _with_other_targets(
    batch: Any, targets: torch.Tensor, sample: int, classes: int
) -> Any | None:
    """The batch with ``sample``'s class targets moved to the next class (ignored
    positions, below 0, stay)."""
    row = targets[sample]
    valid = row >= 0
    if classes < 2 or not bool(valid.any()):
        return None
    replaced = targets.clone()
    replaced[sample] = torch.where(valid, (row + 1) % classes, row)

    def swap(tensor: torch.Tensor) -> torch.Tensor:
        return replaced if tensor is targets else tensor

    return converted(batch, swap, [])
