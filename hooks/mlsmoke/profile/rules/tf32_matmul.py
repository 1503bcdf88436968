"""float32 matmuls on a GPU with TF32 tensor cores, with TF32 off and no autocast.

Threshold (torch.profiler's pattern matcher: fp32 matmul with TF32 off on sm_80+, and
the TensorBoard plugin's AMP rule): compute capability 8.0 or higher, float32 matmul
kernels take at least 10% of the step, TF32 is off and no matmul ran in half or
bfloat16.
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.rules import Recommendation, percent

NAME = "tf32-matmul"
MIN_CAPABILITY = [8, 0]
MATMUL_SHARE = 0.10


def check(figures: Figures) -> Recommendation | None:
    gpu = figures.gpu
    if gpu is None or gpu.tf32 or gpu.reduced_precision_matmuls:
        return None
    if list(gpu.capability) < MIN_CAPABILITY or figures.step_seconds <= 0:
        return None
    share = gpu.fp32_matmul_seconds / figures.step_seconds
    if share < MATMUL_SHARE:
        return None
    major, minor = gpu.capability
    return Recommendation(
        NAME,
        f"float32 matmul kernels take {gpu.fp32_matmul_seconds * 1e3:.2f} ms a step,"
        f" {percent(share)} of it (threshold {percent(MATMUL_SHARE)}), on"
        f" {gpu.name} (sm_{major}{minor}, TF32 tensor cores) with TF32 off and no"
        " autocast",
        'torch.set_float32_matmul_precision("high") at the start of training, or'
        ' the forward under torch.autocast("cuda", dtype=torch.bfloat16)',
    )
