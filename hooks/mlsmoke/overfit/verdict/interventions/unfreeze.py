"""Unfreeze: the same training with the frozen parameters trainable, which tests
``no-gradient`` on frozen parameters (the copy memorizes only if freezing them is
what held the batch back). A model that trains more parameters may want another
rate than the part that trained: a copy that does not memorize at the run's lr is
tried again at ten times it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with the frozen parameters trainable"
FASTER = 10.0


def unfrozen(model_factory: Callable[[], Any], names: list[str]) -> Callable[[], Any]:
    """``model_factory`` whose models train the parameters ``names`` (before the
    optimizer is built over them)."""
    wanted = set(names)

    def build() -> Any:
        model = model_factory()
        for name, parameter in model.named_parameters():
            if name in wanted:
                parameter.requires_grad_(True)
        return model

    return build


def check(run: GateRun, frozen: list[str]) -> runner.Outcome:
    build = unfrozen(run.model_factory, frozen)
    outcome = runner.probe(run, CHANGE, model_factory=build)
    if outcome.memorized or outcome.probe is None:
        return outcome
    faster = runner.probe(
        run,
        f"{CHANGE} and {FASTER:g} times the lr",
        model_factory=build,
        lr_scale=FASTER,
    )
    if not faster.memorized:
        return outcome
    outcome.superseded = True
    return faster
