"""The label-range hints follow the loss that raised: a language model's token loss
gets the vocabulary and ignore_index, a classifier's cross-entropy the number of
classes, a binary loss the [0, 1] range, and none gets another loss's hints."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings

VOCAB = 16


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(input_ids))  # (B, T, V)


def padded_with_minus_one() -> dict[str, torch.Tensor]:
    input_ids = torch.randint(
        0, VOCAB, (4, 8), generator=torch.Generator().manual_seed(0)
    )
    labels = input_ids.clone()
    labels[:, -2:] = -1  # padding marked -1, where the loss ignores -100
    return {"input_ids": input_ids, "labels": labels}


def beyond_the_vocabulary() -> dict[str, torch.Tensor]:
    """Labels from a tokenizer larger than the model's vocabulary: several ids past
    it, which no shift or ignore value explains."""
    batch = padded_with_minus_one()
    batch["labels"][:, -2:] = VOCAB + torch.arange(2)
    return batch


def token_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    logits = model(batch["input_ids"])
    return F.cross_entropy(logits.reshape(-1, VOCAB), batch["labels"].reshape(-1))


def classifier() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))


def three_labels() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(6, 8), torch.tensor([0, 1, 2, 0, 1, 2])


def class_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels)


def binary_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    inputs, labels = batch
    probability = torch.sigmoid(model(inputs)[:, 0])
    return F.binary_cross_entropy(probability, labels.float())


def diagnosis(model, batch, loss):
    settings = GateSettings(name="default", model="m:m", batch="m:b")
    result, _ = run_gate(
        settings, factories={"model": model, "batch": batch, "loss": loss}
    )
    assert result.diagnosis.code == "label-range-error", result.report()
    return " | ".join(result.diagnosis.suggestions)


def test_a_language_models_token_loss_gets_vocabulary_and_ignore_index_hints():
    hints = diagnosis(TinyLM, beyond_the_vocabulary, token_loss)
    assert "len(tokenizer)" in hints and "ignore_index (-100)" in hints
    assert "[0, 1]" not in hints and "num_labels" not in hints


def test_padding_marked_minus_one_is_mapped_to_ignore_index_by_a_checked_repair():
    hints = diagnosis(TinyLM, padded_with_minus_one, token_loss)
    assert hints == (
        'batch["labels"].masked_fill(batch["labels"] == -1, -100)'
        "  (checked: the step runs)"
    )


def test_a_classifiers_cross_entropy_gets_the_number_of_classes():
    hints = diagnosis(classifier, three_labels, class_loss)
    assert "num_labels" in hints and "0..C-1" in hints
    assert "[0, 1]" not in hints and "tokenizer" not in hints


def test_a_binary_loss_gets_the_zero_to_one_range():
    hints = diagnosis(classifier, three_labels, binary_loss)
    assert "take targets in [0, 1]" in hints
    assert "num_labels" not in hints and "tokenizer" not in hints


class TokenClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(input_ids).mean(1))  # (B, 2)


def token_inputs_three_labels() -> tuple[torch.Tensor, torch.Tensor]:
    input_ids = torch.arange(24).reshape(6, 4) % VOCAB  # holds 2 as a token id too
    return input_ids, torch.tensor([0, 1, 2, 0, 1, 2])


def test_a_sequence_classifier_is_told_classes_though_its_inputs_hold_the_value():
    hints = diagnosis(TokenClassifier, token_inputs_three_labels, class_loss)
    assert "num_labels" in hints and "tokenizer" not in hints
