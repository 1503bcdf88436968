"""``memorized``: the loss reached its target; the gate passes. A loss that reached
it below zero must also have levelled off (see ``wrong_objective``)."""

from __future__ import annotations

from mlsmoke.overfit.verdict import probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import MEMORIZED, Diagnosis

REPLAYED = (
    "the objective draws random numbers of its own (noise, timesteps, samples drawn"
    " outside the model's modules): the gate replayed the same draws at every step,"
    " so that on one batch it is one function"
)


@diagnoser(MEMORIZED)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not probes.memorized(evidence):
        return _levels_off_later(run)
    reached_at = evidence.bound_check_from
    replayed = [REPLAYED] if evidence.replayed_draws else []
    if evidence.eval_loss is not None:
        return _memorized_in_eval_mode(run)
    if reached_at is None:
        return Diagnosis(
            MEMORIZED,
            f"memorized the batch in {evidence.steps} steps:"
            f" loss {evidence.initial_loss:.4g} -> {evidence.final_loss:.4g}"
            f" (target {evidence.target:.4g})",
            replayed,
        )
    return Diagnosis(
        MEMORIZED,
        f"memorized the batch in {reached_at} steps:"
        f" loss {evidence.initial_loss:.4g} -> {evidence.losses[reached_at]:.4g}"
        f" (target {evidence.target:.4g}), and below zero it levels off at"
        f" {evidence.final_loss:.4g}",
        replayed,
    )


def _memorized_in_eval_mode(run: GateRun) -> Diagnosis:
    """The train-mode loss stayed above the target, the eval-mode loss of the same
    batch reached it: the model learned the batch, and train-mode noise (dropout)
    keeps the training loss up."""
    evidence = run.evidence
    rates = [f"{name} p={p:g}" for name, p in evidence.dropout.items()]
    noise = ", ".join(rates[:3]) + (f" and {len(rates) - 3} more" if rates[3:] else "")
    return Diagnosis(
        MEMORIZED,
        f"memorized the batch in {evidence.steps} steps, judged in eval mode:"
        f" loss {evidence.initial_loss:.4g} -> {evidence.eval_loss:.4g} in eval mode"
        f" (target {evidence.target:.4g})",
        [
            f"in train mode the loss ends at {evidence.final_loss:.4g}, above the"
            " target: train-mode randomness"
            + (f" (dropout: {noise})" if noise else "")
            + " keeps it there; in eval mode the same batch is at"
            f" {evidence.eval_loss:.4g}"
        ],
    )


def _levels_off_later(run: GateRun) -> Diagnosis | None:
    """Still falling below zero when the bound check ended, and level when trained on:
    a loss with a negative floor (a Gaussian process's NLL), not one without bound."""
    probe = probes.levels_off_later(run)
    if probe is None:
        return None
    evidence = run.evidence
    reached = evidence.losses[evidence.reached_at]
    return Diagnosis(
        MEMORIZED,
        f"memorized the batch in {evidence.reached_at} steps:"
        f" loss {evidence.initial_loss:.4g} -> {reached:.4g}"
        f" (target {evidence.target:.4g}), and below zero it levels off at"
        f" {probe.losses[-1]:.4g} by step {probe.steps}",
        [
            f"{len(evidence.losses) - 1 - evidence.bound_check_from} steps past zero"
            " the loss still fell at a steady pace; trained on without a target,"
            f" it levels off at {probe.losses[-1]:.4g}: a floor, not a fall"
            " without bound"
        ]
        + ([REPLAYED] if evidence.replayed_draws else []),
        losses=list(probe.losses),
        steps=probe.steps,
    )
