"""Unfreeze: the same training with the frozen parameters trainable, which tests
``no-gradient`` on frozen parameters (the copy memorizes only if freezing them is
what held the batch back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.interventions import runner

CHANGE = "with the frozen parameters trainable"


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
    return runner.probe(run, CHANGE, model_factory=unfrozen(run.model_factory, frozen))
