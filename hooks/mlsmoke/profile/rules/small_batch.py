"""The device is mostly idle and its kernels are short: each step is too little work
to hide the host's per-operation overhead.

Threshold: the TensorBoard plugin's GPU utilization below 50%, with a median kernel
under 20 µs (a launch takes 5-20 µs), while the data wait is not what keeps the
device idle (at most 5% of the step, where the data-workers rule takes over).
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.phases import DATA_WAIT
from mlsmoke.profile.rules import Recommendation, percent

NAME = "small-batch"
UTILIZATION = 0.50
SHORT_KERNEL_US = 20.0
DATA_SHARE = 0.05


def check(figures: Figures) -> Recommendation | None:
    gpu = figures.gpu
    if gpu is None or gpu.utilization >= UTILIZATION:
        return None
    if gpu.median_kernel_us >= SHORT_KERNEL_US or gpu.kernels_per_step == 0:
        return None
    if figures.share(DATA_WAIT) > DATA_SHARE:
        return None
    batch = figures.loader.batch_size or figures.batch_size
    size = f"batch_size={batch}" if batch else "the batch size"
    return Recommendation(
        NAME,
        f"GPU utilization {percent(gpu.utilization)} (threshold"
        f" {percent(UTILIZATION)}) with a median kernel of"
        f" {gpu.median_kernel_us:.1f} µs (threshold {SHORT_KERNEL_US:g} µs), at"
        f" {size}",
        f"raise {size} in {figures.loader.where} as far as memory allows (scale the"
        " learning rate with it), or capture the step with torch.compile or CUDA"
        " graphs",
    )
