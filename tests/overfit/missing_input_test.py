"""A module whose own check fails because an input it needs arrived as None: the batch
lacks the field that feeds it, so the gate answers data-error, whatever words the
check used (transformers says "You must specify exactly one of input_ids or
inputs_embeds"; this project says it its own way)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit import check


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)

    def forward(self, tokens=None, vectors=None) -> torch.Tensor:
        if (tokens is None) == (vectors is None):
            raise ValueError("pass tokens or vectors to the encoder")
        if tokens is not None and tokens.shape[1] > 6:
            raise ValueError(f"tokens has length {tokens.shape[1]}, the most is 6")
        hidden = self.embed(tokens) if tokens is not None else vectors
        return hidden.mean(1)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(8, 3)

    def forward(self, tokens=None, targets=None) -> torch.Tensor:
        logits = self.head(self.encoder(tokens=tokens))
        return F.cross_entropy(logits, targets)


def batch(length: int = 5, keep_tokens: bool = True) -> dict[str, torch.Tensor]:
    found = {"targets": torch.arange(6) % 3}
    if keep_tokens:
        found["tokens"] = torch.arange(6 * length).reshape(6, length) % 16
    return found


class KeywordClassifier(Classifier):
    """Takes its inputs as **kwargs, so only the encoder's None argument tells."""

    def forward(self, **inputs: torch.Tensor) -> torch.Tensor:
        logits = self.head(self.encoder(tokens=inputs.get("tokens")))
        return F.cross_entropy(logits, inputs["targets"])


def test_an_input_missing_from_the_batch_is_a_data_error() -> None:
    result = check(Classifier(), batch(keep_tokens=False), device="cpu")
    assert result.diagnosis.code == "data-error"
    assert "tokens" in result.diagnosis.summary


def test_an_input_a_submodule_got_as_none_is_a_data_error() -> None:
    result = check(KeywordClassifier(), batch(keep_tokens=False), device="cpu")
    assert result.diagnosis.code == "data-error"
    assert "module 'encoder' got no tokens (None)" in result.diagnosis.summary


def test_an_input_that_arrived_but_is_too_long_is_not_called_missing() -> None:
    result = check(Classifier(), batch(length=8), device="cpu")
    assert result.diagnosis.code == "shape-error"


def test_the_same_model_with_its_input_memorizes() -> None:
    assert check(Classifier(), batch(), device="cpu").passed
