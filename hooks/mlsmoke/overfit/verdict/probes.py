"""Bounded training probes the diagnoses run to tell causes apart.

A probe is another short training run of the same factories: another lr, float64, or
the CPU. Every probe (these and the one-pass ones in ``forward_probes.py``) is memoized
per gate run, so that diagnoses asking the same question share one answer. The lr
range test (``lr_range.py``) is built on :func:`at_scale`; each probe may take at most
twice the run's own time: a failing gate costs a few times its own run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import curve_measures, dropout, probe_stops
from mlsmoke.overfit.verdict.gate_run import GateRun

MIN_PROBE_SECONDS = 5.0


def remember(run: GateRun, key: Any, compute: Callable[[], Any]) -> Any:
    """``compute()``, once per gate run and ``key``."""
    if key not in run.memo:
        run.memo[key] = compute()
    return run.memo[key]


# --- training probes ------------------------------------------------------------------


def may_probe(run: GateRun) -> bool:
    """Whether training probes fit the budget: not after a run that hit its timeout."""
    return not run.evidence.timed_out


def probe_timeout(run: GateRun) -> float:
    """Seconds one probe may take: twice the run's own time (a float64 step costs about
    two float32 ones), never more than the gate's timeout."""
    return min(run.settings.timeout, max(2 * run.evidence.seconds, MIN_PROBE_SECONDS))


def at_scale(run: GateRun, factor: float, steps: int | None = None) -> Evidence:
    """The same run with every learning rate of its recipe times ``factor``, for
    ``steps`` updates (the run's own max-steps by default), to the same target; it
    ends sooner once it clearly will not memorize (``probe_stops.py``)."""
    steps = steps or run.settings.max_steps
    return remember(
        run,
        ("lr", factor, steps),
        lambda: run.probe(
            lr_scale=factor,
            max_steps=steps,
            timeout=probe_timeout(run),
            stop_early=probe_stops.hopeless_after_a_third(steps),
        ),
    )


def at_flat_lr(run: GateRun) -> Evidence:
    """The script run again with every update at the lr its optimizer was built with,
    its schedule left out (script mode)."""
    return remember(
        run,
        "flat-lr",
        lambda: run.probe(flat_lr=True, timeout=probe_timeout(run)),
    )


def memorizing_probe(probes: list[Evidence]) -> Evidence | None:
    return next((p for p in probes if memorized(p)), None)


def memorized(evidence: Evidence) -> bool:
    """The run reached its target, and a loss that did so below zero then levelled
    off (a loss falling without bound reaches any target)."""
    start = evidence.bound_check_from
    return evidence.memorized and (
        start is None or curve_measures.levels_off(evidence.losses[start:])
    )


def in_float64(run: GateRun) -> Evidence:
    """The same run in float64: a precision problem disappears there."""
    return remember(
        run,
        "float64",
        lambda: run.probe(dtype="float64", timeout=probe_timeout(run), **_targets(run)),
    )


def _targets(run: GateRun) -> dict[str, float | None]:
    """The main run's target; the configured ones when it never resolved (a loss that
    was not finite at init)."""
    if run.evidence.target is not None:
        return {}
    return {
        "target_loss": run.settings.target_loss,
        "target_ratio": run.settings.target_ratio,
    }


def on_cpu(run: GateRun) -> Evidence:
    """The same run on the CPU, where a device-side error raises at its real line."""
    return remember(run, "cpu", lambda: run.probe(device="cpu", max_steps=1))


def without_target(run: GateRun, steps: int) -> Evidence:
    """A short run that no target stops: where does the loss go by itself?"""
    return remember(
        run,
        ("free", steps),
        lambda: run.probe(
            max_steps=steps,
            target_loss=float("-inf"),
            target_ratio=None,
            timeout=probe_timeout(run),
        ),
    )


# Steps past the bound check a loss below zero may take to level off: a Gaussian
# process's negative log likelihood falls at a steady pace until its noise reaches
# the data's, then levels.
LEVEL_SEARCH_STEPS = 100
LEVEL_WINDOW = 20
# A floor lies within the loss's own scale: at most this many times as far below zero
# as the loss started from it. A loss that levels only at -1e21 overflowed its way
# there (a flipped KL term), it did not find a bound.
LEVEL_DEPTH = 10


def levels_off_later(run: GateRun) -> Evidence | None:
    """A loss that reached its target below zero and still fell when the engine's
    bound check ended, trained on without a target: the probe when its last
    stretch levels off at a finite value (a bound), else None."""
    evidence = run.evidence
    start = evidence.bound_check_from
    if start is None or not evidence.memorized or not may_probe(run):
        return None
    probe = without_target(run, start + LEVEL_SEARCH_STEPS)
    tail = probe.losses[-LEVEL_WINDOW - 1 :]
    if probe.error is not None or len(probe.losses) <= start + LEVEL_WINDOW:
        return None
    depth = LEVEL_DEPTH * abs(evidence.losses[0])
    return probe if curve_measures.levels_off(tail) and tail[-1] >= -depth else None


def steps_spent(run: GateRun) -> int:
    """Steps the training probes of this gate run have taken so far."""
    return sum(probe.steps for probe in run.probes)


def without_dropout(run: GateRun, steps: int) -> Evidence:
    """The same run with every dropout module at p = 0, for ``steps`` updates."""
    return remember(
        run,
        ("no-dropout", steps),
        lambda: run.probe(
            model_factory=dropout.without_dropout(run.model_factory),
            max_steps=steps,
            timeout=probe_timeout(run),
        ),
    )


def describe_lr_result(probe: Evidence) -> str:
    if probe.error is not None:
        return f"at lr {probe.configured_lr:g}: raised {type(probe.error).__name__}"
    losses = probe.losses
    if probe.reached:
        return f"at lr {probe.configured_lr:g}: memorized in {probe.steps} steps"
    if not losses:  # cut by the diagnosis budget before its first step
        return f"at lr {probe.configured_lr:g}: stopped before its first step"
    if not math.isfinite(losses[-1]):
        return (
            f"at lr {probe.configured_lr:g}: the loss became {losses[-1]} at step"
            f" {probe.steps}"
        )
    return (
        f"at lr {probe.configured_lr:g}: loss {losses[0]:.4g} -> {losses[-1]:.4g}"
        f" in {probe.steps} steps"
    )
