"""The same case trained by a plain torch.optim loop, with no mlsmoke code: the proof
that a correct model really memorizes and that a bug really stops it.

The loop is what a user writes: build the model and the batch, call the model (or the
LightningModule's ``training_step``), step a torch.optim optimizer (the project's own,
or Adam at the gate's default lr) and the scheduler ``configure_optimizers`` returns.
It memorizes when the loss reaches ``target-ratio`` of its initial value, every loss is
finite and none is below 0: every loss in the catalog is bounded below by 0, so a
negative one is a wrong objective, not memorization.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..cases import Case
from .runner import one_thread

STEPS, TARGET_RATIO, LR = 300, 0.05, {"adam": 5e-3, "sgd": 0.1}


@dataclass
class PlainOutcome:
    memorized: bool
    raised: BaseException | None = None
    losses: list[float] = field(default_factory=list)

    def __str__(self) -> str:
        if self.raised is not None:
            return f"raised {type(self.raised).__name__}: {self.raised}"
        shown = ", ".join(f"{loss:.4g}" for loss in self.losses[:3])
        return f"{len(self.losses)} steps: {shown} ... {self.losses[-1]:.4g}"


def train_plainly(case: Case) -> PlainOutcome:
    with one_thread():
        torch.manual_seed(0)
        try:
            return _train(case)
        except Exception as error:  # the bug raised: that is the plain loop's answer
            return PlainOutcome(False, raised=error)


def _train(case: Case) -> PlainOutcome:
    model = case.model()
    batch = _first_batch(case.batch())
    optimizer, scheduler = _optimizers(case, model)
    options = case.options
    steps = options.get("max_steps", STEPS)
    ratio = options.get("target_ratio", TARGET_RATIO)
    losses: list[float] = []
    model.train()
    for _ in range(steps):
        loss = _loss(case, model, batch)
        losses.append(loss.item())
        if not math.isfinite(losses[-1]) or losses[-1] < 0:
            return PlainOutcome(False, losses=losses)
        if losses[-1] <= ratio * losses[0]:
            return PlainOutcome(losses[0] > 0, losses=losses)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    return PlainOutcome(False, losses=losses)


def _first_batch(source: Any) -> Any:
    if hasattr(source, "train_dataloader"):  # a LightningDataModule
        source.prepare_data()
        source.setup("fit")
        source = source.train_dataloader()
    if isinstance(source, torch.utils.data.DataLoader):
        return next(iter(source))
    return source


def _optimizers(case: Case, model: torch.nn.Module) -> tuple[Any, Any]:
    if case.optimizer is not None:
        return case.optimizer(model.parameters()), None
    if hasattr(model, "configure_optimizers") and "lr" not in case.options:
        configured = model.configure_optimizers()
        if isinstance(configured, Mapping):
            scheduler = configured.get("lr_scheduler")
            if isinstance(scheduler, Mapping):
                scheduler = scheduler["scheduler"]
            return configured["optimizer"], scheduler
        return configured, None
    name = case.options.get("optimizer", "adam")
    lr = case.options.get("lr", LR[name])
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9), None
    return torch.optim.Adam(model.parameters(), lr=lr), None


def _loss(case: Case, model: torch.nn.Module, batch: Any) -> torch.Tensor:
    if case.loss is not None:
        return case.loss(model, batch)
    if hasattr(model, "training_step"):
        with warnings.catch_warnings():  # self.log outside a Trainer only warns
            warnings.simplefilter("ignore")
            out = model.training_step(batch, 0)
        return out["loss"] if isinstance(out, Mapping) else out
    out = model(**batch) if isinstance(batch, Mapping) else model(*batch)
    if isinstance(out, torch.Tensor):
        return out
    return out["loss"] if isinstance(out, Mapping) else out.loss
