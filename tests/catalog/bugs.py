"""Buggy variants of the catalog's models: each class or factory carries one classic
training bug, marked ``# bug:`` where it happens."""

from __future__ import annotations

import random
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from . import models
from .models import (
    CLASSES,
    CNNClassifier,
    GRUClassifier,
    MLPClassifier,
    TinyBertForSequenceClassification,
    TinyGPT,
)

# --- make it run: data, shapes, label ranges, memory -------------------------------


def labels_beyond_logits() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch(classes=CLASSES + 1)  # bug: 5 classes, 4 logits
    return x, y


def text_batch_three_labels() -> dict[str, torch.Tensor]:
    return models.text_batch(num_labels=3)  # labels 0..2 for a num_labels=2 model


def text_batch_of_lists() -> dict[str, Any]:
    batch = models.text_batch()
    batch["input_ids"] = batch["input_ids"].tolist()  # bug: never tensorized
    return batch


def text_batch_misnamed_labels() -> dict[str, torch.Tensor]:
    batch = models.text_batch()
    batch["label"] = batch.pop("labels")  # bug: the model takes `labels`
    return batch


def float_token_batch() -> tuple[torch.Tensor, torch.Tensor]:
    idx, targets = models.token_batch()
    return idx.float(), targets  # bug: token ids as floats


def float_class_targets() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch()
    return x, y.float()  # bug: class indices as floats


def column_targets() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch()
    return x, y.unsqueeze(1)  # bug: (B, 1) targets for a (B, C) cross-entropy


def cnn_with_wrong_flatten_size() -> CNNClassifier:
    return CNNClassifier(head_inputs=16 * 4 * 4)  # bug: computed for 16x16 images


def gru_with_wrong_head() -> GRUClassifier:
    return GRUClassifier(hidden=32, head_inputs=64)  # bug: bidirectional size


class MLPAllocatingPairwise(MLPClassifier):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body(x)  # (B, hidden)
        # bug: an all-pairs expansion sized by a constant instead of the batch
        pairs = h.new_empty(4_000_000, 4_000_000)
        return self.head(h) + pairs[0, 0]


# --- numerics -----------------------------------------------------------------------


class MLPWithLogOfRelu(MLPClassifier):
    """bug: log-probabilities taken of ReLU outputs; log(0) = -inf."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(F.relu(self.head(self.body(x))))


def nll_of_log_relu(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.nll_loss(model(x), y)


class MLPWithNaiveSoftmax(MLPClassifier):
    """bug: a hand-written softmax with a temperature of 1/1000; exp overflows float32
    (beyond 88) where float64 (up to 709) still holds it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.exp(1000 * self.head(self.body(x)))
        return scores / scores.sum(dim=1, keepdim=True)


def nll_of_probabilities(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.nll_loss(torch.log(model(x)), y)


class InvertedMaskAttention(models.CausalSelfAttention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (
            t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v)
        )
        att = (q @ k.transpose(-2, -1)) / k.size(-1) ** 0.5
        mask = self.mask[:, :, :T, :T] == 1  # bug: hides the past, not the future
        att = att.masked_fill(mask, float("-inf")).softmax(-1)  # last row: all -inf
        return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))


def gpt_with_inverted_mask() -> TinyGPT:
    model = TinyGPT()
    for block in model.blocks:
        block.attn = InvertedMaskAttention(model.config)
    return model


# --- gradients that do not flow -----------------------------------------------------


def mlp_with_frozen_body() -> MLPClassifier:
    model = MLPClassifier(hidden=4)
    for parameter in model.parameters():
        parameter.requires_grad_(False)  # bug: meant to freeze only the first layer
    model.head.bias.requires_grad_(True)
    return model


class CNNWithDetachedFeatures(CNNClassifier):
    def __init__(self) -> None:
        super().__init__(head_inputs=4)
        self.squeeze = nn.Conv2d(16, 4, 1)

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        features = self.features(images).detach()  # bug: cuts the graph
        pooled = self.squeeze(features).mean(dim=(2, 3))  # (B, 4)
        return self.head(pooled)


class GRUUnderNoGrad(GRUClassifier):
    def __init__(self) -> None:
        super().__init__(hidden=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():  # bug: left over from an evaluation helper
            out, _ = self.rnn(x)
        return self.head(out[:, -1])


class LSTMThroughData(models.LSTMClassifier):
    def __init__(self) -> None:
        super().__init__(hidden=4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        out, _ = self.rnn(x)
        logits = self.head(out.data[:, -1])  # bug: .data leaves the graph
        return logits, F.cross_entropy(logits, y)


def loss_through_item(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    value = F.cross_entropy(model(x), y).item()  # bug: logged value returned as loss
    return torch.tensor(value)


class GPTSkippingBlocks(TinyGPT):
    def trunk(self, idx: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(positions)
        for block in self.blocks:
            block_out = block  # bug: the block is never called  # noqa: F841
        return self.ln_f(x)


# --- learning rate and objective ----------------------------------------------------


class BertWithFlippedLoss(TinyBertForSequenceClassification):
    def compute_loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return -F.cross_entropy(logits, labels)  # bug: the sign is flipped


def maximizing_adam(params: Any) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=1e-2, maximize=True)  # bug: gradient ascent


def unnormalized_regression_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    scales = torch.logspace(0, -2, models.FEATURES)  # bug: features left unnormalized
    x = torch.randn(models.SAMPLES, models.FEATURES, generator=g) * scales
    weights = torch.randn(models.FEATURES, 1, generator=g) / scales.unsqueeze(1)
    return x, x @ weights  # every feature matters equally to the target


def linear_regressor() -> nn.Module:
    return nn.Linear(models.FEATURES, 1)


def mse(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.mse_loss(model(x), y)


# --- not learning -------------------------------------------------------------------


def mlp_with_dead_relus() -> MLPClassifier:
    model = MLPClassifier()
    with torch.no_grad():
        model.body[0].bias.fill_(-20.0)  # bug: every unit of the first layer is dead
    return model


def cross_entropy_with_heavy_smoothing(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    logits, _ = model(x, y)
    return F.cross_entropy(logits, y, label_smoothing=0.6)  # bug: meant 0.06


# --- determinism --------------------------------------------------------------------


class MLPWithNoisyInputs(MLPClassifier):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 2.0 * torch.randn_like(x)  # bug: augmentation that ignores eval mode
        return self.head(self.body(x))


_unseeded = random.Random()


def batch_with_fresh_labels() -> tuple[torch.Tensor, torch.Tensor]:
    x, _ = models.classification_batch()
    # bug: labels from a generator the gate's seed does not reach
    y = torch.tensor([_unseeded.randrange(CLASSES) for _ in range(len(x))])
    return x, y


# --- warnings -----------------------------------------------------------------------


def mlp_with_overconfident_head() -> MLPClassifier:
    model = MLPClassifier()
    with torch.no_grad():
        model.head.weight.mul_(40.0)  # bug: init scaled up; init loss far above log(4)
    return model


def single_class_batch() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch()
    return x, torch.zeros_like(y)  # bug: sorted data, the first batch is one class


class GRUWithoutBatchFirst(GRUClassifier):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(8, 32)  # bug: batch_first forgotten; runs along the batch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)  # reads (B, T, F) as (T, B, F)
        return self.head(out[:, -1])


class GRUWithViewForTranspose(GRUClassifier):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(8, 32)  # sequence-first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, f = x.shape
        out, _ = self.rnn(x.view(t, b, f))  # bug: view where transpose(0, 1) was meant
        return self.head(out[-1])  # (B, hidden) -> (B, classes)


def raw_pixel_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1234)
    images = torch.randint(0, 256, (models.SAMPLES, 1, 12, 12), generator=g)
    return images.float(), torch.arange(models.SAMPLES) % CLASSES  # bug: not / 255


def mlp_with_dropout() -> MLPClassifier:
    return MLPClassifier(dropout=0.1)


def mlp_with_first_layer_frozen() -> MLPClassifier:
    model = MLPClassifier()
    model.body[0].requires_grad_(False)  # bug: an experiment's freeze left in
    return model


# --- bookkeeping: which tensors really train --------------------------------------

DATA = models.classification_batch()


def adam_over_the_data(params: Any) -> torch.optim.Optimizer:
    return torch.optim.Adam([DATA[0]], lr=1e-2)  # bug: the inputs, not the model


def data_batch() -> tuple[torch.Tensor, torch.Tensor]:
    return DATA


class PlainListMLP(nn.Module):
    """Hidden layers kept in a Python list: model.parameters() lists only the head."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = [nn.Linear(models.FEATURES, 2), nn.Linear(2, 2)]  # bug
        self.head = nn.Linear(2, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return self.head(x)


# --- losses given what they do not take ------------------------------------------


def multi_label_batch() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = models.classification_batch()
    tags = torch.nn.functional.one_hot(y, models.CLASSES).float()
    tags[::3, 0] = 1.0  # several tags per sample
    return x, tags


def bce_on_logits(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, tags = batch
    # bug: binary_cross_entropy takes probabilities; the sigmoid was forgotten
    return F.binary_cross_entropy(model(x), tags)


def unreduced_cross_entropy(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y, reduction="none")  # bug: one loss per sample


def one_output_regression() -> nn.Module:
    return models.MLPClassifier(classes=1)


def scalar_regression_batch() -> tuple[torch.Tensor, torch.Tensor]:
    x, _ = models.classification_batch()
    return x, torch.randn(len(x), generator=models._generator())


def broadcast_mse(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    # bug: a (B, 1) output against a (B,) target broadcasts to (B, B)
    return F.mse_loss(model(x), y)


def vae_kl_flipped(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, _ = batch
    reconstruction, mu, log_var = model(x)
    error = F.mse_loss(reconstruction, x, reduction="sum") / len(x)
    # bug: the KL term's sign flipped: it rewards moving away from the prior
    return error - models.kl_to_prior(mu, log_var)
