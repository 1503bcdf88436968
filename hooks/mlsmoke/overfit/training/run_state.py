"""The state of one training run: what train() was given, where it is (the phase
read when something raises) and what it holds."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from mlsmoke.overfit.training import instruments
from mlsmoke.overfit.training.determinism import RandomState
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.training.objective import call_model, check_loss, default_loss
from mlsmoke.overfit.training.step_function import StepFunction

StepCallback = Callable[[int, float], None]
# (losses so far, target) -> whether a probe's answer is already clear
EarlyStop = Callable[[list[float], float | None], bool]


@dataclass
class TrainingRun:
    """One call of train(): what it was given, where it is, and what it holds."""

    evidence: Evidence
    model_factory: Callable[[], Any]
    batch_factory: Callable[[], Any]
    loss_fn: Callable[[Any, Any], Any] | None
    optimizer_factory: Callable[[Any, float | None], Any]
    lr: float | None
    lr_scale: float
    target_loss: float | None
    target_ratio: float | None
    timeout: float
    on_step: StepCallback | None
    step: StepFunction | None = None  # the project's step, in place of the loop's body
    accumulate: int = 1  # backward passes per update the step function declares
    train_mode: bool = True  # the step function should run the model in train mode
    stop_early: EarlyStop | None = None  # a probe that may end once its answer is clear
    phase: str = "model"  # read when something raises
    started: float = field(default_factory=time.perf_counter)
    model: Any = None
    batch: Any = None
    trace: instruments.ModuleTrace | None = None
    threads: int | None = None
    # The generators' state before the first forward, restored before each one when
    # the objective samples (Evidence.replayed_draws).
    replay_from: RandomState | None = None

    def forward(self) -> torch.Tensor:
        self.phase = "forward"
        if self.loss_fn is not None:
            return check_loss(self.loss_fn(self.model, self.batch), from_callable=True)
        output = call_model(self.model, self.batch)
        self.phase = "loss"
        return check_loss(default_loss(output), from_callable=False)

    def out_of_time(self) -> bool:
        return time.perf_counter() - self.started > self.timeout
