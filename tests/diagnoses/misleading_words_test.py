"""Errors whose words would mislead a diagnosis, and the tensors that do not: a check
of values that speaks of sizes, one in another language, one with no words at all (a
bare assert, an empty ValueError), a reworded support check, and "out of range" said
of a shape. The code follows what the failing frame and the batch hold."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit import check
from mlsmoke.overfit.verdict.diagnoses.checked_repair import CHECKED

B, FEATURES, CLASSES = 24, 6, 5


def _features() -> torch.Tensor:
    return torch.randn(B, FEATURES, generator=torch.Generator().manual_seed(5))


def _labels(first: int = 0) -> torch.Tensor:
    return torch.arange(B) % CLASSES + first


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, CLASSES)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # (B, C)


def _worded(message: str) -> type[nn.Module]:
    """A model that checks its labels' values itself, and says so in ``message``."""

    class CheckedHead(Head):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            if y.min() < 0 or y.max() >= CLASSES:
                raise ValueError(message)
            return F.cross_entropy(super().forward(x), y)

    return CheckedHead


def _check(model, batch, loss=None):
    result = check(model, batch, loss, device="cpu", timeout=60)
    assert result.verdict == "fail", result.report()
    return result.diagnosis.code, result.report()


# The words of these messages point elsewhere: "size", "shape" and "dimension" at a
# shape, "int" (inside "intervalle") at a dtype, nothing at all.
MISLEADING = [
    "label is larger than the size of the output layer",
    "les étiquettes doivent être dans l'intervalle des classes",
    "Etiketten passen nicht zur Dimension der Ausgabe",
    "",
]


@pytest.mark.parametrize("message", MISLEADING)
def test_one_based_labels_are_shifted_whatever_the_check_says(message):
    code, report = _check(_worded(message), lambda: (_features(), _labels(1)))
    assert code == "label-range-error", report
    assert f"batch[1] - 1  {CHECKED}" in report


@pytest.mark.parametrize("message", MISLEADING)
def test_a_label_past_the_outputs_is_a_range_error_not_a_shape_error(message):
    """Labels 0..C against C outputs: no repair runs, and a check that speaks of sizes
    is still a check of values, since the values are outside and the shapes agree."""
    labels = _labels()
    labels[0] = CLASSES
    code, report = _check(_worded(message), lambda: (_features(), labels))
    assert code == "label-range-error", report
    assert "holds 5, outside classes 0..4" in report


def test_a_bare_assert_on_the_labels_reads_the_labels():
    def asserts(model, batch):
        x, y = batch
        n = model(x).shape[-1]
        assert (y < n).all()
        return F.cross_entropy(model(x), y)

    labels = _labels()
    labels[3], labels[4] = CLASSES + 2, CLASSES + 1  # two values: no ignore marker
    code, report = _check(Head, lambda: (_features(), labels), asserts)
    assert code == "label-range-error", report
    assert "holds 6, 7, outside classes 0..4" in report


def test_a_reworded_support_check_is_read_from_the_error_it_was_raised_from():
    def poisson_loss(model, batch):
        x, counts = batch
        rate = F.softplus(model(x)).clamp_min(1e-3)
        try:
            counts_model = torch.distributions.Poisson(rate, validate_args=True)
            return -counts_model.log_prob(counts.float()).mean()
        except ValueError as error:
            raise ValueError("Zählwerte ungültig") from error

    counts = torch.randint(0, 4, (B,)).unsqueeze(1).expand(B, CLASSES).clone()
    counts[::4, 0] = -1
    code, report = _check(Head, lambda: (_features(), counts), poisson_loss)
    assert code == "label-range-error", report
    assert "outside the support of the loss's distribution" in report


def test_out_of_range_said_of_a_shape_is_a_shape_error():
    def checks_its_targets(model, batch):
        x, y = batch
        logits = model(x)
        if y.shape != logits.shape[:-1]:
            raise ValueError("targets out of range")
        return F.cross_entropy(logits, y)

    columns = _labels().unsqueeze(1)  # (B, 1), every value a class
    code, report = _check(Head, lambda: (_features(), columns), checks_its_targets)
    assert code == "shape-error", report
    assert f"batch[1].squeeze(-1)  {CHECKED}" in report


def test_a_dtype_error_in_words_of_ranges_is_cast():
    """A project's check of the dtype that speaks of bounds and indices: the float
    indices in the failing frame, not the words, choose the cast."""

    def picks_by_index(model, batch):
        x, picks = batch
        if picks.is_floating_point():
            raise IndexError("index out of bounds: expected whole indices")
        return -model(x).log_softmax(-1).gather(1, picks).mean()

    picks = _labels().float().unsqueeze(1)
    code, report = _check(Head, lambda: (_features(), picks), picks_by_index)
    assert code == "data-error", report
    assert f"batch[1].long()  {CHECKED}" in report
