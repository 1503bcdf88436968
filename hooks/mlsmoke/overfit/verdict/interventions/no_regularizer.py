"""A regularizer's weight 0: the same training with the loss's extra term (an L2 or
entropy penalty, added with a weight) left out of the sum, which tests the floor that
the term sets.

The term is found from evidence only (``loss_terms.py``): the loss's last addition of
two scalars, one of which the targets do not move, whether the loss callable or the
model's own forward computes it. The copy's loss makes the same addition, counted
the same way, return the data term alone; a call that makes another number of
additions (its code took another path) raises rather than leave out another sum.
Script mode cannot change the script's loss: the copy is not run there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.training.objective import forward_loss
from mlsmoke.overfit.verdict import probes
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner
from mlsmoke.overfit.verdict.loss_terms import ExtraTerm, Sums

CHANGE = "with the regularizer's weight 0"


class AdditionsChanged(RuntimeError):
    """The copy's loss made another number of scalar additions than the one the
    term was found in: which one to leave out is no longer known."""


def check(run: GateRun, term: ExtraTerm, **overrides: Any) -> runner.Outcome:
    """The copy trained with the data term alone; ``overrides`` are the probe's
    (a target of its own where the main run could resolve none)."""
    loss_fn = _data_term_only(run.loss_fn, term)
    return runner.intervene(
        run,
        CHANGE,
        lambda seconds: run.probe(
            cpu_seconds=seconds,
            timeout=probes.probe_timeout(run),
            loss_fn=loss_fn,
            **overrides,
        ),
    )


def _data_term_only(loss_fn: Callable[..., Any] | None, term: ExtraTerm) -> Callable:
    def data_term(model: Any, batch: Any) -> Any:
        sums = Sums(keep=(term.addition, term.kept))
        with sums:
            loss = forward_loss(loss_fn, model, batch)
        if term.additions and len(sums.sums) != term.additions:
            raise AdditionsChanged(
                f"the loss made {len(sums.sums)} scalar additions, not the"
                f" {term.additions} its regularizer was found among"
            )
        return loss

    return data_term
