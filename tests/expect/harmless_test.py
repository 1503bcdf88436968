"""Harmless changes pass, and false alarms are counted: other seeds, larger and smaller
batches, a refactored loader, an augmentation within the recorded ranges."""

from __future__ import annotations

from collections import Counter

import expect_loaders as loaders
import pytest
from conftest import RECORDED, failures_of

SEEDS = range(1, 11)


@pytest.mark.parametrize("data", sorted(RECORDED))
def test_no_false_alarm_over_seeds_and_batch_sizes(suites, data):
    make, validation = RECORDED[data]
    size = _batch_size(make)
    alarms: Counter[str] = Counter()
    runs = 0
    for seed in SEEDS:
        for batch in (size, size * 4, max(2, size // 4)):
            loader = make(seed=seed, batch=batch)
            for failure in failures_of(
                suites[data], loader, validation() if validation else None
            ):
                alarms[f"{failure.field} {failure.kind}"] += 1
            runs += 1
    assert runs == 3 * len(SEEDS)
    assert alarms == Counter(), f"{sum(alarms.values())} false alarms in {runs} runs"


def _batch_size(make) -> int:
    import inspect

    return inspect.signature(make).parameters["batch"].default


@pytest.mark.parametrize(
    "data,loader",
    [
        ("images", lambda: loaders.images(augment=True)),
        ("images", lambda: loaders.images(seed=7, augment=True, batch=32)),
        ("tokens", lambda: loaders.token_windows(refactor=True)),
        ("tokens", lambda: loaders.token_windows(seed=3, refactor=True, batch=16)),
    ],
    ids=["augmentation", "augmentation-seed-batch", "refactor", "refactor-seed-batch"],
)
def test_a_harmless_change_passes(suites, data, loader):
    assert failures_of(suites[data], loader()) == []


def test_a_refactored_loader_draws_the_same_windows():
    """The refactor is a real one: the same batches through other code."""
    plain, refactored = loaders.token_windows(), loaders.token_windows(refactor=True)
    for _ in range(3):
        for a, b in zip(plain(), refactored()):
            assert a.equal(b)
