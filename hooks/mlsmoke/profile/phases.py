"""The phases of a profiled step, as ``record_function`` ranges named in the trace."""

from __future__ import annotations

PREFIX = "mlsmoke/"
DATA_WAIT = "data_wait"
H2D_COPY = "h2d_copy"
FORWARD = "forward"
BACKWARD = "backward"
OPTIMIZER = "optimizer_step"
OTHER = "other"
# In step order; OTHER is the rest of the step.
PHASES = (DATA_WAIT, H2D_COPY, FORWARD, BACKWARD, OPTIMIZER)
# Nested in OPTIMIZER: the zero_grad call, where zero-filled gradients show.
ZERO_GRAD = "zero_grad"

LABELS = {
    DATA_WAIT: "data wait",
    H2D_COPY: "h2d copy",
    FORWARD: "forward",
    BACKWARD: "backward",
    OPTIMIZER: "optimizer step",
    OTHER: "other",
}


def range_name(phase: str) -> str:
    return PREFIX + phase


def phase_of(name: str) -> str | None:
    """The phase a trace event's name marks, or None."""
    if not name.startswith(PREFIX):
        return None
    phase = name[len(PREFIX) :]
    return phase if phase in PHASES or phase == ZERO_GRAD else None
