"""The learning rates each optimizer is used with, to tell a project's lr that is
anomalous (orders of magnitude off) from one the gate's step budget is short for.

The ranges span what practice uses: Adam-family rates from fine-tuning (1e-5) to
small models (1e-2); SGD's from 1e-4 to 1. A rate is anomalous a decade beyond them.
"""

from __future__ import annotations

USUAL: dict[str, tuple[float, float]] = {
    "Adam": (1e-5, 1e-2),
    "AdamW": (1e-5, 1e-2),
    "NAdam": (1e-5, 1e-2),
    "RAdam": (1e-5, 1e-2),
    "Adamax": (1e-5, 1e-2),
    "SparseAdam": (1e-5, 1e-2),
    "RMSprop": (1e-5, 1e-2),
    "Adagrad": (1e-4, 1.0),
    "Adadelta": (1e-2, 10.0),
    "SGD": (1e-4, 1.0),
}
MARGIN = 10.0  # a decade beyond the usual range


def usual_range(optimizer: str) -> tuple[float, float] | None:
    return USUAL.get(optimizer)


def is_anomalous(optimizer: str, lr: float) -> bool:
    """Whether ``lr`` is a decade or more outside ``optimizer``'s usual range; an
    optimizer of unknown practice never is."""
    usual = USUAL.get(optimizer)
    if usual is None or lr <= 0:
        return lr == 0
    low, high = usual
    return lr < low / MARGIN or lr > high * MARGIN
