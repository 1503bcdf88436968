"""What a sequence model is shown to read, measured on plain models of token ids:
each is called with the edit an intervention makes to its inputs."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from torch.nn import functional as F

from mlsmoke.overfit.verdict.reading_window import (
    PREFIXES,
    Reading,
    changed,
    described,
    measured_reading,
)

LENGTH, VOCAB = 12, 9
IDS = torch.randint(0, VOCAB, (4, LENGTH), generator=torch.Generator().manual_seed(1))
TABLE = torch.randn(VOCAB, VOCAB, generator=torch.Generator().manual_seed(2))
PLACES = torch.randn(LENGTH, VOCAB, generator=torch.Generator().manual_seed(3))


def bigram(ids: torch.Tensor) -> torch.Tensor:
    return TABLE[ids]  # (B, T, V)


def bigram_with_positions(ids: torch.Tensor) -> torch.Tensor:
    return TABLE[ids] + PLACES[: ids.shape[1]]


def trigram(ids: torch.Tensor) -> torch.Tensor:
    """The sum of the last three tokens' rows, the ones before the start left out."""
    rows = F.pad(TABLE[ids], (0, 0, 2, 0))  # (B, T + 2, V)
    return rows[:, 2:] + 0.5 * rows[:, 1:-1] + 0.25 * rows[:, :-2]


def prefix_mean(ids: torch.Tensor) -> torch.Tensor:
    return TABLE[ids].cumsum(1) / torch.arange(1, ids.shape[1] + 1)[:, None]


def current_and_first(ids: torch.Tensor) -> torch.Tensor:
    """The current token and the first one: no trailing window holds both."""
    return TABLE[ids] + TABLE[ids[:, :1]]


def whole_row(ids: torch.Tensor) -> torch.Tensor:
    return TABLE[ids] + TABLE[ids].mean(1, keepdim=True)


def constant(ids: torch.Tensor) -> torch.Tensor:
    return torch.zeros(*ids.shape, VOCAB)


def called(model: Callable[[torch.Tensor], torch.Tensor]) -> Reading | None:
    return measured_reading(lambda edit: model(edit(IDS)), LENGTH)


@pytest.mark.parametrize(
    ("model", "reading"),
    [
        (bigram, Reading(window=1, positional=False)),
        (bigram_with_positions, Reading(window=1, positional=True)),
        (trigram, Reading(window=3, positional=False)),
        (prefix_mean, PREFIXES),  # a cumulative mean reads back to the start
        (current_and_first, PREFIXES),  # the window is never under-estimated
        (whole_row, None),  # later inputs move earlier outputs: not a prefix
        (constant, None),  # nothing moves: nothing shown
    ],
)
def test_the_reading_is_what_interventions_show(model, reading):
    assert called(model) == reading


@pytest.mark.parametrize("model", [bigram, trigram, prefix_mean])
def test_the_measure_takes_a_few_forwards_more_than_log2_of_the_length(model):
    calls = []

    def outputs(edit):
        calls.append(edit)
        return model(edit(IDS))

    measured_reading(outputs, LENGTH)
    assert len(calls) <= math.ceil(math.log2(LENGTH + 1)) + 5


def test_a_move_below_the_tolerance_does_not_count_but_a_larger_one_does():
    def faint(scale: float) -> Callable[[torch.Tensor], torch.Tensor]:
        return lambda ids: bigram(ids) + scale * prefix_mean(ids)

    assert called(faint(1e-9)) == Reading(window=1, positional=False)
    assert called(faint(1e-3)) == PREFIXES


def test_a_forward_that_raises_on_an_edit_is_no_evidence_of_a_short_window():
    def refuses_changed_starts(ids: torch.Tensor) -> torch.Tensor | None:
        return None if not torch.equal(ids[:, 0], IDS[:, 0]) else bigram(ids)

    reading = measured_reading(lambda edit: refuses_changed_starts(edit(IDS)), LENGTH)
    assert reading == PREFIXES


def test_every_changed_id_differs_and_stays_within_the_batch_range():
    edited = changed(2, 7)(IDS)
    assert torch.equal(edited[:, :2], IDS[:, :2]) and torch.equal(
        edited[:, 7:], IDS[:, 7:]
    )
    assert bool((edited[:, 2:7] != IDS[:, 2:7]).all())
    assert int(edited.min()) >= int(IDS.min()) and int(edited.max()) <= int(IDS.max())
    ones = changed(0, 3)(torch.zeros(2, 3, dtype=torch.long))
    assert bool((ones == 1).all())  # one value in the batch: the next id
    mask = torch.ones(2, 4, dtype=torch.bool)
    assert changed(1, 4)(mask).tolist() == [[True, False, False, False]] * 2


def test_outputs_that_turn_nan_are_no_evidence():
    def nan_when_changed(ids: torch.Tensor) -> torch.Tensor:
        out = bigram(ids)
        return out if torch.equal(ids, IDS) else torch.full_like(out, float("nan"))

    assert called(nan_when_changed) is None


def test_the_reading_is_described_for_a_user():
    assert described(PREFIXES) == "the prefix up to each position"
    assert (
        described(Reading(1, False)) == "the last 1 input position(s), at any position"
    )
    assert (
        described(Reading(3, True)) == "the last 3 input position(s), and the position"
    )
