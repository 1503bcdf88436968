"""The families trained by a plain torch.optim loop, with no mlsmoke code: the proof
that a correct model memorizes and that a bug stops it.

The library catalog's loop, with the two things these families need written out as a
user would: an objective that samples draws the same random numbers at every step
(the generator's state is saved once and restored before each step), and a loss may
go below zero when it then levels off: it trains on BOUND_STEPS after its target,
and a loss that went below zero must level off within LEVEL_STEPS more.
"""

from __future__ import annotations

import math

import torch

from ..cases import Case
from ..library import plain
from ..library.runner import one_thread

STEPS, TARGET_RATIO, BOUND_STEPS, LEVEL_STEPS = 300, 0.05, 20, 100
DEPTH = 10  # a floor lies at most this many times the initial loss below zero


def train_plainly(case: Case) -> plain.PlainOutcome:
    with one_thread():
        torch.manual_seed(0)
        try:
            return _train(case)
        except Exception as error:  # the bug raised: that is the plain loop's answer
            return plain.PlainOutcome(False, raised=error)


def _train(case: Case) -> plain.PlainOutcome:
    model = case.model()
    batch = plain._first_batch(case.batch())
    optimizer, scheduler = plain._optimizers(case, model)
    target_loss = case.options.get("target_loss")
    losses: list[float] = []
    draws = torch.random.get_rng_state()
    model.train()
    reached = None
    for step in range(STEPS + BOUND_STEPS + LEVEL_STEPS):
        torch.random.set_rng_state(draws)
        loss = plain._loss(case, model, batch)
        losses.append(loss.item())
        if not math.isfinite(losses[-1]) or losses[-1] < -DEPTH * abs(losses[0]):
            return plain.PlainOutcome(False, losses=losses)  # fell past any floor
        target = target_loss if target_loss is not None else TARGET_RATIO * losses[0]
        if reached is None and losses[-1] <= target:
            reached = step
        if reached is None and step >= STEPS:
            break
        if reached is not None and step >= reached + BOUND_STEPS:
            after = losses[reached:]
            if min(after) >= 0 or _levels_off(after):
                return plain.PlainOutcome(losses[0] > 0, losses=losses)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    return plain.PlainOutcome(False, losses=losses)


def _levels_off(values: list[float]) -> bool:
    """The last BOUND_STEPS fell less than half as much as the BOUND_STEPS before."""
    if len(values) <= 2 * BOUND_STEPS:
        return False
    recent = values[-BOUND_STEPS - 1] - values[-1]
    before = values[-2 * BOUND_STEPS - 1] - values[-BOUND_STEPS - 1]
    return recent <= 0.5 * max(before, 0.0) or recent < 1e-3 * abs(values[-1])
