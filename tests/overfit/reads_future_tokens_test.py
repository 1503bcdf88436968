"""reads-future-tokens in model mode: a tiny GPT whose attention sees the whole
sequence memorizes its next-token batch by reading each target one position on, and
is named; the same GPT with its causal mask is not. The data evidence is tested with
plain tensors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mlsmoke.overfit import check
from mlsmoke.overfit.verdict.checks.reads_future_tokens import (
    is_shifted_by_one,
    loss_shifts_targets,
    next_token_fields,
)
from mlsmoke.overfit.verdict.forward_probes import ForwardCapture

VOCAB, LENGTH, WIDTH = 16, 12, 32


class TinyGPT(nn.Module):
    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.causal = causal
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.wpe = nn.Embedding(LENGTH, WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU())
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> tuple:
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        q, k, v = self.qkv(x).split(WIDTH, dim=2)
        x = x + F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        logits = self.head(x + self.mlp(x))  # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        return logits, loss


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (4, LENGTH + 1), generator=generator)
    return tokens[:, :-1], tokens[:, 1:]  # x, y = tokens[:-1], tokens[1:]


def warnings(causal: bool) -> dict[str, str]:
    result = check(lambda: TinyGPT(causal), batch, lr=1e-2, max_steps=300)
    assert result.passed, result.report()
    return {warning.code: warning.message for warning in result.warnings}


def test_a_gpt_without_its_causal_mask_is_named_reading_its_targets():
    message = warnings(causal=False)["reads-future-tokens"]
    assert "the target the batch[1] is the input the batch[0]" in message
    assert "output at position 5 moved" in message
    assert "inputs at positions 6..11 changed" in message
    assert "is_causal=False" in message


def test_the_same_gpt_with_its_causal_mask_is_not():
    assert "reads-future-tokens" not in warnings(causal=True)


def test_targets_one_position_on_are_next_token_targets():
    tokens = torch.arange(10).view(2, 5)
    x, y = tokens[:, :-1], tokens[:, 1:]
    assert is_shifted_by_one(x, y)
    assert not is_shifted_by_one(x, x.clone())  # unshifted: target-copies-input's
    assert not is_shifted_by_one(y, x)  # shifted the other way: the previous token


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ([[2, 3, 4, 9], [6, 7, -1, -1]], True),  # the last and ignored ones: skipped
        ([[2, 3, 4, 5], [0, 0, 0, 0]], False),  # half the rows are something else
        ([[-1, -1, -1, 5], [-1, -1, -1, -1]], False),  # too few positions to tell
    ],
)
def test_only_kept_targets_are_compared(targets, expected):
    inputs = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    assert is_shifted_by_one(inputs, torch.tensor(targets)) is expected


def test_constant_rows_are_no_evidence():
    ones = torch.ones(2, 6, dtype=torch.long)
    assert not is_shifted_by_one(ones, ones.clone())


def test_the_field_named_is_the_one_the_targets_follow():
    tokens = torch.arange(12).view(2, 6)
    x, y = tokens[:, :-1], tokens[:, 1:]
    batch = {"mask": torch.ones_like(x), "input_ids": x, "labels": y}
    found = next_token_fields(ForwardCapture(nn.Identity(), batch), logits(x), y)
    assert found is not None and not found.shifted_by_the_loss
    assert (found.inputs_name, found.targets_name) == ("input_ids", "labels")
    floats = {"x": x.float(), "labels": y}
    assert (
        next_token_fields(ForwardCapture(nn.Identity(), floats), logits(x), y) is None
    )


def test_labels_equal_to_the_inputs_count_where_the_loss_shifts_them():
    ids = torch.randint(0, VOCAB, (4, 8), generator=torch.Generator().manual_seed(0))
    labels = ids.clone()
    labels[:, -2:] = -100  # padding the loss ignores
    scores = torch.randn(4, 8, VOCAB, generator=torch.Generator().manual_seed(1))
    shifted = F.cross_entropy(scores[:, :-1].flatten(0, 1), labels[:, 1:].flatten())
    own = F.cross_entropy(scores.flatten(0, 1), labels.flatten())
    batch = {"input_ids": ids, "labels": labels}
    for loss, expected in ((float(shifted), True), (float(own), False)):
        capture = ForwardCapture(nn.Identity(), batch, loss=loss)
        found = next_token_fields(capture, scores, labels)
        assert loss_shifts_targets(loss, scores, labels) is expected
        if expected:
            assert found is not None and found.shifted_by_the_loss
            assert (found.inputs_name, found.targets_name) == ("input_ids", "labels")
        else:
            assert found is None


def logits(tokens: torch.Tensor) -> torch.Tensor:
    return torch.zeros(*tokens.shape, VOCAB)
