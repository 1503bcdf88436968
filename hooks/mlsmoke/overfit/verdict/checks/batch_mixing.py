"""``batch-mixing``: in eval mode, the output for sample i has a gradient with respect
to the input of another sample j, so samples leak into each other (a ``view`` where a
``permute`` was meant, a forgotten ``batch_first``). Checked for several i, not only
the first: some bugs leave sample 0 alone."""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Warning

CODE = "batch-mixing"
TOLERANCE = 1e-7


def check(run: GateRun) -> list[Warning]:
    capture = forward_probes.capture_forward(run)
    if capture is None or not (capture.args or capture.kwargs):
        return []
    logits = forward_probes.logits_of(capture.output)
    if logits is None or logits.dim() < 2:
        return []
    samples = int(logits.shape[0])
    if samples < 2:
        return []
    for i in sample_indices(samples):
        leak = leaking_sample(capture, i, samples)
        if leak is not None:
            return [
                Warning(
                    CODE,
                    f"in eval mode the output for sample {i} depends on the input of"
                    f" sample {leak}: samples leak into each other; look for a view or"
                    " reshape where transpose/permute was meant, or a sequence model"
                    " missing batch_first=True",
                )
            ]
    return []


def sample_indices(samples: int) -> list[int]:
    """The samples whose outputs are checked: the first, the second, the middle, the
    last."""
    return sorted({0, min(1, samples - 1), samples // 2, samples - 1})


def leaking_sample(
    capture: forward_probes.ForwardCapture, i: int, samples: int
) -> int | None:
    """Another sample j whose input reaches sample i's output, or None."""
    model = capture.model
    model.eval()
    watched: list[torch.Tensor] = []
    args, kwargs = _with_grad_inputs(capture.args, capture.kwargs, samples, watched)
    handles = [] if watched else _watch_embeddings(model, samples, watched)
    try:
        with torch.enable_grad():
            output = forward_probes.logits_of(model(*args, **kwargs))
            if output is None or not output.requires_grad or not watched:
                return None
            output[i].sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    for tensor in watched:
        grad = tensor.grad
        if grad is None or grad.shape[0] != samples:
            continue
        per_sample = grad.detach().flatten(1).abs().sum(1)  # (samples,)
        per_sample[i] = 0
        if float(per_sample.max()) > TOLERANCE:
            return int(per_sample.argmax())
    return None


def _with_grad_inputs(
    args: tuple, kwargs: dict, samples: int, watched: list[torch.Tensor]
) -> tuple[tuple, dict]:
    def prepare(value: Any) -> Any:
        if (
            isinstance(value, torch.Tensor)
            and value.is_floating_point()
            and value.dim() >= 1
            and value.shape[0] == samples
        ):
            leaf = value.detach().clone().requires_grad_(True)
            watched.append(leaf)
            return leaf
        return value

    return tuple(map(prepare, args)), {k: prepare(v) for k, v in kwargs.items()}


def _watch_embeddings(
    model: torch.nn.Module, samples: int, watched: list[torch.Tensor]
) -> list:
    """For token inputs: watch the embeddings' outputs instead of the ids."""

    def hook(module: Any, args: tuple, output: Any) -> Any:
        if isinstance(output, torch.Tensor) and output.dim() >= 2:
            if output.shape[0] == samples:
                leaf = output.detach().requires_grad_(True)
                watched.append(leaf)
                return leaf
        return None

    return [
        module.register_forward_hook(hook)
        for module in model.modules()
        if isinstance(module, torch.nn.Embedding)
    ]
