"""The registry of checks: warnings shown whether the gate passes or fails.

Each check is a module with ``CODE`` and ``check(run) -> list[Warning]``. They look
at a fresh model and batch (``overfit/forward_probes.py``) and never change the
verdict. A new warning is a new module here plus a line in REGISTRY.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mlsmoke.overfit.verdict.checks import (
    batch_mixing,
    batch_not_moved,
    dead_weights,
    degenerate_batch,
    dropout_active,
    frozen_parameters,
    init_loss,
    loss_mixes_samples,
    reads_future_tokens,
    script_writes_project,
    step_order,
    target_copies_input,
    unregistered_parameters,
)

if TYPE_CHECKING:
    from mlsmoke.overfit.verdict.gate_run import GateRun
    from mlsmoke.overfit.verdict.result import Warning

Check = Callable[["GateRun"], "list[Warning]"]

REGISTRY: list[Check] = [
    init_loss.check,
    batch_not_moved.check,
    degenerate_batch.check,
    batch_mixing.check,
    loss_mixes_samples.check,
    dropout_active.check,
    unregistered_parameters.check,
    step_order.check,
    dead_weights.check,
    frozen_parameters.check,
    target_copies_input.check,
    reads_future_tokens.check,
    script_writes_project.check,
]


def run_checks(run: GateRun) -> list[Warning]:
    """Every check's warnings, in REGISTRY order; a check that breaks says nothing."""
    warnings: list[Warning] = []
    for check in REGISTRY:
        # A check must never turn a verdict into a crash, nor let a factory's
        # sys.exit() (argparse in a model's config) end the gate.
        try:
            warnings += check(run)
        except (Exception, SystemExit):
            continue
    return warnings
