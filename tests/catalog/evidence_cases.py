"""Bugs the gate must name from evidence, not from an error's wording: what the batch
holds, which tensors train, the forward signature, what the loss is made of.

Hand-written torch models, and a tiny transformers BERT built from a config (no
download), called through its real forward and a real transformers collator.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from . import bugs, models
from .cases import Case

MLP, LM, HF, CNN = "MLP", "transformer LM", "transformers BERT", "CNN"


# --- the data pipeline ----------------------------------------------------------------


def tiny_bert() -> nn.Module:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=3,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(config)


def bert_batch() -> dict[str, torch.Tensor]:
    g = models._generator()
    input_ids = torch.randint(1, 100, (12, 10), generator=g)
    return {
        "input_ids": input_ids,
        "attention_mask": torch.ones_like(input_ids),
        "labels": torch.arange(12) % 3,
    }


def bert_raw_text() -> dict[str, Any]:
    batch = bert_batch()
    batch["input_ids"] = [f"example number {i}" for i in range(12)]  # never tokenized
    return batch


def bert_ragged_examples() -> dict[str, torch.Tensor]:
    from transformers import default_data_collator

    examples = [
        {"input_ids": list(range(1, 4 + i % 5)), "labels": i % 3} for i in range(12)
    ]
    return default_data_collator(examples)  # no padding: raises on ragged lengths


def bert_label_key() -> dict[str, torch.Tensor]:
    batch = bert_batch()
    batch["label"] = batch.pop("labels")  # swallowed by forward(**kwargs): no loss
    return batch


def bert_input_id_key() -> dict[str, torch.Tensor]:
    batch = bert_batch()
    batch["input_id"] = batch.pop("input_ids")
    return batch


def nan_features() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch()
    x[3, 5] = float("nan")  # a missing value read as NaN
    return x, y


# --- shapes, checked in the project's own words ---------------------------------------


class BlockSizeLM(nn.Module):
    """A causal LM with a bare ``assert`` on its context length (no message)."""

    def __init__(self, block: int = 8) -> None:
        super().__init__()
        self.block = block
        self.embed = nn.Embedding(32, 16)
        self.head = nn.Linear(16, 32)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        assert idx.shape[1] <= self.block
        logits = self.head(self.embed(idx))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def long_token_batch() -> tuple[torch.Tensor, torch.Tensor]:
    tokens = torch.randint(0, 32, (4, 13), generator=models._generator())
    return tokens[:, :-1], tokens[:, 1:]  # 12 positions for a block of 8


class ChannelCheckedCNN(models.CNNClassifier):
    """Validates its input the way vision libraries do, in its own words."""

    def forward(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if images.shape[1] != 1:
            raise ValueError(
                f"pixel_values carry {images.shape[1]} channels; the model was"
                " configured for 1"
            )
        return super().forward(images, labels)


def rgb_batch() -> tuple[torch.Tensor, torch.Tensor]:
    images, labels = models.image_batch()
    return images.expand(-1, 3, -1, -1).contiguous(), labels


# --- bookkeeping ----------------------------------------------------------------------

DATA = bugs.DATA
adam_over_the_data = bugs.adam_over_the_data
PlainListMLP = bugs.PlainListMLP


def adam_over_another_model(params: Any) -> torch.optim.Optimizer:
    return torch.optim.Adam(models.MLPClassifier().parameters(), lr=1e-2)


def data_batch() -> tuple[torch.Tensor, torch.Tensor]:
    return DATA


class AllInAList(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = [nn.Linear(models.FEATURES, 64), nn.Linear(64, models.CLASSES)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers[1](torch.relu(self.layers[0](x)))


class BareTemperature(models.MLPClassifier):
    """A learned temperature as a bare tensor: trains nowhere, saved nowhere."""

    def __init__(self) -> None:
        super().__init__()
        self.temperature = torch.ones(1, requires_grad=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) / self.temperature


class LogitsOnly(models.MLPClassifier):
    """Returns a tuple with no loss in it: the gate needs a loss callable."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        logits = super().forward(x)
        return logits, logits.softmax(-1)


# --- checks that must not assume ------------------------------------------------------


class CrossEntropyPlusKL(models.MLPClassifier):
    """Cross-entropy plus a KL term towards a second, sharper head (self-distillation):
    its loss at init is not log(C), rightly (2.36 for 4 classes, log 4 = 1.39)."""

    def __init__(self) -> None:
        super().__init__()
        self.shadow = nn.Linear(64, models.CLASSES)
        with torch.no_grad():
            self.shadow.weight.mul_(48)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        hidden = self.body(x)
        logits, shadow = self.head(hidden), self.shadow(hidden)
        kl = F.kl_div(
            F.log_softmax(logits, -1),
            F.log_softmax(shadow, -1),
            log_target=True,
            reduction="batchmean",
        )
        return logits, F.cross_entropy(logits, y) + kl


class ScrambledTokens(nn.Module):
    """Reshapes the (B, T) ids as (T, B) before the embedding: samples trade tokens.
    A gradient watching the embedding's output cannot see it."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(64, 32)
        self.head = nn.Linear(32, models.CLASSES)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> Any:
        batch, length = input_ids.shape
        ids = input_ids.reshape(length, batch).t()  # bug: meant the identity
        logits = self.head(self.embed(ids).mean(1))
        return {"loss": F.cross_entropy(logits, labels), "logits": logits}


def token_class_batch() -> dict[str, torch.Tensor]:
    batch = models.text_batch()
    return {"input_ids": batch["input_ids"], "labels": batch["labels"]}


class BatchStandardized(models.MLPClassifier):
    """Standardizes features with the batch's own mean and std, in eval mode too."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward((x - x.mean(0)) / (x.std(0) + 1e-5))


def ce(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


CASES = [
    Case("bert-raw-text", HF, tiny_bert, bert_raw_text, "data-error",
         says="batch field input_ids holds a list of str", bug="text never tokenized"),
    Case("bert-ragged-no-padding", HF, tiny_bert, bert_ragged_examples, "data-error",
         says="the batch factory raised ValueError",
         bug="default_data_collator on examples of different lengths"),
    Case("bert-label-key", HF, tiny_bert, bert_label_key, "data-error",
         says="batch key 'label' does not match forward()'s parameter 'labels'",
         bug="batch key 'label': the model returns no loss"),
    Case("bert-input-id-key", HF, tiny_bert, bert_input_id_key, "data-error",
         says="'input_ids'", bug="batch key 'input_id'"),
    Case("bert", HF, tiny_bert, bert_batch),
    Case("mlp-nan-feature", MLP, models.MLPClassifier, nan_features, "non-finite",
         loss=ce, says="batch field batch[0] holds 1 NaN or Inf values",
         bug="a missing value read as NaN"),
    Case("lm-block-size-assert", LM, BlockSizeLM, long_token_batch, "shape-error",
         says="inputs of the model's forward", bug="sequences longer than the block"),
    Case("cnn-channels-check", CNN, ChannelCheckedCNN, rgb_batch, "shape-error",
         says="channels", bug="3-channel images for a 1-channel model"),
    Case("mlp-adam-over-another-model", MLP, models.MLPClassifier, data_batch,
         "optimizer-mismatch", loss=ce, optimizer=adam_over_another_model,
         says="the optimizer lacks 6 of the model's 6", bug="a second model trains"),
    Case("mlp-all-layers-in-a-list", MLP, AllInAList, data_batch,
         "unregistered-parameters", loss=ce, says="layers[1].bias",
         warnings=frozenset({"unregistered-parameters"}),
         bug="every layer in a Python list"),
    Case("mlp-bare-temperature", MLP, BareTemperature, data_batch, loss=ce,
         warnings=frozenset({"unregistered-parameters"}),
         bug="a learned temperature as a bare tensor"),
    Case("mlp-returns-no-loss", MLP, LogitsOnly, data_batch, "config-error",
         says="add a loss callable", bug="a model that computes no loss"),
    Case("mlp-cross-entropy-plus-kl", MLP, CrossEntropyPlusKL, data_batch),
    Case("tokens-reshaped-before-embedding", HF, ScrambledTokens, token_class_batch,
         warnings=frozenset({"batch-mixing"}), bug="ids.reshape(T, B).t()"),
    Case("mlp-batch-statistics", MLP, BatchStandardized, data_batch, loss=ce,
         warnings=frozenset({"batch-mixing"}), bug="x.mean(0) in forward"),
]  # fmt: skip


def tiny_vit() -> nn.Module:
    from transformers import ViTConfig, ViTForImageClassification

    config = ViTConfig(
        image_size=16,
        patch_size=4,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=models.CLASSES,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return ViTForImageClassification(config)


def grayscale_pixels() -> dict[str, torch.Tensor]:
    g = models._generator()
    pixels = torch.randn(8, 1, 16, 16, generator=g)  # a 3-channel model
    return {"pixel_values": pixels, "labels": torch.arange(8) % models.CLASSES}


CASES.append(
    Case("vit-grayscale-for-rgb", "transformers ViT", tiny_vit, grayscale_pixels,
         "shape-error", says="inputs of module 'vit.embeddings.patch_embeddings'",
         bug="1-channel images for a 3-channel ViT")
)  # fmt: skip
