"""The optimizer step launches kernels per parameter tensor, where the optimizer has
a ``foreach`` (or ``fused``) implementation that launches a few for all of them.

Threshold (torch.profiler's pattern matcher: a single-tensor optimizer): on CUDA, at
least 2 kernels a parameter tensor in the optimizer step, 16 parameter tensors or more,
and foreach and fused both off while the optimizer takes them.
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.rules import Recommendation

NAME = "optimizer-kernels"
KERNELS_PER_TENSOR = 2.0
MIN_TENSORS = 16


def check(figures: Figures) -> Recommendation | None:
    gpu, optimizer = figures.gpu, figures.optimizer
    if gpu is None or optimizer.foreach or optimizer.fused:
        return None
    if not (optimizer.supports_foreach or optimizer.supports_fused):
        return None
    tensors = optimizer.parameter_tensors
    if tensors < MIN_TENSORS:
        return None
    per_tensor = gpu.optimizer_kernels_per_step / tensors
    if per_tensor < KERNELS_PER_TENSOR:
        return None
    option = "fused=True" if optimizer.supports_fused else "foreach=True"
    return Recommendation(
        NAME,
        f"the {optimizer.name} step launches {gpu.optimizer_kernels_per_step:g}"
        f" kernels for {tensors} parameter tensors ({per_tensor:.1f} a tensor,"
        f" threshold {KERNELS_PER_TENSOR:g}), with foreach and fused off",
        f"{optimizer.name}(..., {option}) in {optimizer.source}",
    )
