"""``zero_grad`` fills every gradient with zeros instead of setting it to None:
a kernel (or loop) per parameter, and the next backward adds into the zeros.

Threshold (torch.profiler's pattern matcher: ``aten::zero_`` under ``zero_grad``):
any tensor zero-filled inside the step's zero_grad call.
"""

from __future__ import annotations

from mlsmoke.profile.figures import Figures
from mlsmoke.profile.rules import Recommendation

NAME = "zero-grad"


def check(figures: Figures) -> Recommendation | None:
    if figures.zero_grad_fills < 1:
        return None
    where = figures.optimizer.zero_grad_where or figures.optimizer.source
    return Recommendation(
        NAME,
        f"zero_grad fills {figures.zero_grad_fills:g} gradient tensors with zeros a"
        " step (threshold 1), set_to_none is off",
        f"zero_grad(set_to_none=True) (torch's default since 2.0) at {where}",
    )
