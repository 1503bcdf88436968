"""target-copies-input in factory mode: labels equal to the inputs warn only when the
trained model copies them (its loss stays low on rows it never saw); a model that
shifts its labels itself, as a Hugging Face causal LM does, does not warn."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from mlsmoke.overfit import check
from mlsmoke.overfit.verdict.checks.target_copies_input import equal_fields

VOCAB, LENGTH = 32, 12


class TinyLM(nn.Module):
    def __init__(self, shifts_labels: bool) -> None:
        super().__init__()
        self.shifts_labels = shifts_labels
        self.embed = nn.Embedding(VOCAB, 64)
        self.rnn = nn.GRU(64, 64, batch_first=True)
        self.head = nn.Linear(64, VOCAB)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        states, _ = self.rnn(self.embed(input_ids))
        logits = self.head(states)  # (B, T, V)
        if self.shifts_labels:
            logits, labels = logits[:, :-1], labels[:, 1:]
        return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


def batch() -> dict[str, torch.Tensor]:
    tokens = torch.randint(
        0, VOCAB, (4, LENGTH), generator=torch.Generator().manual_seed(0)
    )
    return {"input_ids": tokens, "labels": tokens.clone()}


def codes(shifts_labels: bool) -> set[str]:
    result = check(lambda: TinyLM(shifts_labels), batch, lr=1e-2, max_steps=300)
    assert result.passed, result.report()
    return {warning.code for warning in result.warnings}


def test_labels_the_model_copies_warn():
    assert "target-copies-input" in codes(shifts_labels=False)


def test_labels_the_model_shifts_itself_do_not_warn():
    assert "target-copies-input" not in codes(shifts_labels=True)


def test_equal_fields_are_integer_fields_of_one_shape_and_values():
    tokens = torch.arange(6).view(2, 3)
    assert equal_fields({"x": tokens, "y": tokens.clone()}) == [("x", "y")]
    assert equal_fields((tokens, tokens + 1)) == []
    assert equal_fields((tokens.float(), tokens.float())) == []


def test_positions_a_target_ignores_are_left_out_of_the_comparison():
    tokens = torch.arange(1, 7).view(2, 3)
    masked = tokens.clone()
    masked[:, 0] = -1  # an ignore_index: the loss skips these positions
    assert equal_fields((tokens, masked)) == [("[0]", "[1]")]
    assert equal_fields((tokens, torch.full_like(tokens, -100))) == []
