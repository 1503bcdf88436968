"""Label smoothing off: the same training with every ``cross_entropy`` call's
``label_smoothing`` at 0, which tests a loss floor that smoothing sets (a smoothed
target's cross-entropy cannot fall below its own entropy).

The calls are intercepted through ``torch.nn.functional.cross_entropy``, which
``nn.CrossEntropyLoss`` and code that calls ``F.cross_entropy`` both go through.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.nn import functional

from mlsmoke.overfit.verdict import forward_probes, probes
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner
from mlsmoke.overfit.verdict.probes import remember

CHANGE = "with label smoothing off"


def smoothing_used(run: GateRun) -> float:
    """The largest label_smoothing the loss passes to cross_entropy, in one
    forward of a fresh model; 0.0 when none, or when the forward cannot run."""
    return remember(run, "label-smoothing", lambda: _smoothing_used(run))


def _smoothing_used(run: GateRun) -> float:
    seen: list[float] = []
    try:
        with seeded(run), _smoothing(seen, None):
            model, batch = forward_probes.fresh_model_and_batch(run)
            with torch.no_grad():
                forward_probes.loss_of(run, model, batch)
    except Exception:
        return 0.0
    return max(seen, default=0.0)


def check(run: GateRun) -> runner.Outcome:
    def train(seconds: float) -> Any:
        with _smoothing([], 0.0):
            return run.probe(cpu_seconds=seconds, timeout=probes.probe_timeout(run))

    return runner.intervene(run, CHANGE, train)


@contextlib.contextmanager
def _smoothing(seen: list[float], forced: float | None) -> Iterator[None]:
    """Record each call's label_smoothing in ``seen``; with ``forced``, call with
    that value instead."""
    original = functional.cross_entropy

    def cross_entropy(*args: Any, **kwargs: Any) -> Any:
        seen.append(float(kwargs.get("label_smoothing", 0.0)))
        if forced is not None:
            kwargs["label_smoothing"] = forced
        return original(*args, **kwargs)

    functional.cross_entropy = cross_entropy
    try:
        yield
    finally:
        functional.cross_entropy = original
