"""Five small architectures the catalog builds its correct models and its bugs on.

An MLP classifier, a CNN, a GRU and an LSTM classifier, a nanoGPT-style causal
transformer LM returning ``(logits, loss)``, and a Hugging Face style classifier called
as ``model(**batch)`` that returns an output with ``.loss`` and ``.logits``. All are
tiny, so that each memorizes its batch on a CPU in well under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

CLASSES = 4
FEATURES = 16
SAMPLES = 32


class MLPClassifier(nn.Module):
    def __init__(self, classes: int = CLASSES, hidden: int = 64, dropout: float = 0.0):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(FEATURES, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))  # (B, FEATURES) -> (B, classes)


class CNNClassifier(nn.Module):
    """Called as ``model(images, labels)``; returns the scalar loss."""

    def __init__(self, classes: int = CLASSES, head_inputs: int = 16 * 3 * 3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),  # (B, 8, 12, 12)
            nn.ReLU(),
            nn.MaxPool2d(2),  # (B, 8, 6, 6)
            nn.Conv2d(8, 16, 3, padding=1),  # (B, 16, 6, 6)
            nn.ReLU(),
            nn.MaxPool2d(2),  # (B, 16, 3, 3)
        )
        self.head = nn.Linear(head_inputs, classes)

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images).flatten(1))  # (B, classes)

    def forward(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.logits(images), labels)


class CNNWithBatchNorm(nn.Module):
    """Returns logits; batch norm mixes samples in train mode only."""

    def __init__(self, classes: int = CLASSES):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(4),  # (B, 8, 4, 4)
        )
        self.head = nn.Linear(8 * 4 * 4, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images).flatten(1))


class GRUClassifier(nn.Module):
    def __init__(self, hidden: int = 32, classes: int = CLASSES, head_inputs: int = 0):
        super().__init__()
        self.rnn = nn.GRU(8, hidden, batch_first=True)
        self.head = nn.Linear(head_inputs or hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)  # (B, T, hidden)
        return self.head(out[:, -1])  # (B, classes)


class LSTMClassifier(nn.Module):
    """Called as ``model(x, y)``; returns ``(logits, loss)``."""

    def __init__(self, hidden: int = 32, classes: int = CLASSES):
        super().__init__()
        self.rnn = nn.LSTM(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        out, _ = self.rnn(x)  # (B, T, hidden)
        logits = self.head(out[:, -1])
        return logits, F.cross_entropy(logits, y)


@dataclass
class LMConfig:
    vocab: int = 32
    block: int = 16
    embd: int = 32
    heads: int = 2
    layers: int = 2


class CausalSelfAttention(nn.Module):
    def __init__(self, config: LMConfig):
        super().__init__()
        self.heads = config.heads
        self.qkv = nn.Linear(config.embd, 3 * config.embd)
        self.proj = nn.Linear(config.embd, config.embd)
        mask = torch.tril(torch.ones(config.block, config.block))
        self.register_buffer("mask", mask.view(1, 1, config.block, config.block))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (
            t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v)
        )
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))  # (B, nh, T, T)
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)  # (B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, config: LMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.embd)
        self.attn = CausalSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.embd)
        self.mlp = nn.Sequential(
            nn.Linear(config.embd, 4 * config.embd),
            nn.GELU(),
            nn.Linear(4 * config.embd, config.embd),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """nanoGPT in miniature: ``model(idx, targets) -> (logits, loss)``."""

    def __init__(self, config: LMConfig | None = None):
        super().__init__()
        self.config = config = config or LMConfig()
        self.tok_emb = nn.Embedding(config.vocab, config.embd)
        self.pos_emb = nn.Embedding(config.block, config.embd)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.ln_f = nn.LayerNorm(config.embd)
        self.lm_head = nn.Linear(config.embd, config.vocab, bias=False)

    def trunk(self, idx: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(positions)  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> tuple:
        logits = self.lm_head(self.trunk(idx))  # (B, T, vocab)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


@dataclass
class SequenceClassifierOutput:
    loss: torch.Tensor | None
    logits: torch.Tensor


class TinyBertForSequenceClassification(nn.Module):
    """Hugging Face style: ``model(input_ids=..., attention_mask=..., labels=...)``."""

    def __init__(self, vocab: int = 64, hidden: int = 32, num_labels: int = CLASSES):
        super().__init__()
        self.num_labels = num_labels
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.classifier = nn.Linear(hidden, num_labels)

    def pooled(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> torch.Tensor:
        hidden = self.encoder(self.embeddings(input_ids))  # (B, T, hidden)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)  # (B, hidden)

    def compute_loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        labels: torch.Tensor | None = None,
    ) -> SequenceClassifierOutput:
        logits = self.classifier(self.pooled(input_ids, attention_mask))
        loss = None if labels is None else self.compute_loss(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


# Batches: generated from a private generator, so that they never depend on the
# global RNG state.


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


def classification_batch(classes: int = CLASSES) -> tuple[torch.Tensor, torch.Tensor]:
    g = _generator()
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    y = torch.arange(SAMPLES) % classes
    return x, y[torch.randperm(SAMPLES, generator=g)]


def image_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = _generator()
    images = torch.randn(SAMPLES, 1, 12, 12, generator=g)
    return images, torch.arange(SAMPLES) % CLASSES


def sequence_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = _generator()
    return torch.randn(SAMPLES, 10, 8, generator=g), torch.arange(SAMPLES) % CLASSES


def token_batch(config: LMConfig | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    config = config or LMConfig()
    g = _generator()
    tokens = torch.randint(1, config.vocab, (8, config.block + 1), generator=g)
    tokens[:, 1::2] = 0  # a separator every other token: what follows it needs context
    return tokens[:, :-1], tokens[:, 1:]  # (B, T) inputs and next-token targets


def text_batch(num_labels: int = CLASSES) -> dict[str, torch.Tensor]:
    g = _generator()
    input_ids = torch.randint(1, 64, (SAMPLES, 12), generator=g)
    attention_mask = torch.ones_like(input_ids)
    attention_mask[::3, 9:] = 0  # some padded sequences
    labels = torch.arange(SAMPLES) % num_labels
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def cross_entropy(model: nn.Module, batch: tuple) -> torch.Tensor:
    """The loss callable of the models that return logits."""
    x, y = batch
    return F.cross_entropy(model(x), y)


class GraphNetwork(nn.Module):
    """Two rounds of message passing over a dense adjacency: the batch's samples are
    a graph's nodes, and each node's output depends on its neighbours by design."""

    def __init__(self, hidden: int = 32):
        super().__init__()
        self.embed = nn.Linear(FEATURES, hidden)
        self.rounds = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(2)])
        self.head = nn.Linear(hidden, CLASSES)

    def forward(self, x: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.embed(x))  # (N, hidden)
        for layer in self.rounds:
            h = torch.relu(layer(adjacency @ h)) + h  # (N, N) @ (N, hidden)
        return self.head(h)  # (N, CLASSES)


def graph_batch() -> dict[str, torch.Tensor]:
    x, y = classification_batch()
    nodes = len(x)
    ring = torch.eye(nodes) + torch.roll(torch.eye(nodes), 1, dims=1)
    return {"x": x, "adjacency": ring / ring.sum(1, keepdim=True), "y": y}


def graph_loss(model: nn.Module, batch: dict) -> torch.Tensor:
    return F.cross_entropy(model(batch["x"], batch["adjacency"]), batch["y"])


class GaussianRegressor(nn.Module):
    """Predicts a mean and a log-variance: its negative log-likelihood goes below 0
    once the variance shrinks, as it should."""

    def __init__(self, hidden: int = 64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, hidden), nn.ReLU())
        self.mean = nn.Linear(hidden, 1)
        self.log_var = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x)
        return self.mean(h).squeeze(-1), self.log_var(h).squeeze(-1)


def gaussian_nll(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    mean, log_var = model(x)
    return F.gaussian_nll_loss(mean, y, log_var.exp())


class VAE(nn.Module):
    """A variational autoencoder: reconstruction plus a KL term to the prior."""

    def __init__(self, latent: int = 8, hidden: int = 64):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(FEATURES, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.log_var = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, FEATURES)
        )

    def forward(self, x: torch.Tensor):
        h = self.encoder(x)
        mu, log_var = self.mu(h), self.log_var(h)  # (B, latent) each
        z = mu + torch.randn_like(mu) * (0.5 * log_var).exp()
        return self.decoder(z), mu, log_var


def kl_to_prior(mu: torch.Tensor, log_var: torch.Tensor) -> torch.Tensor:
    return -0.5 * torch.mean(torch.sum(1 + log_var - mu.pow(2) - log_var.exp(), dim=1))


def vae_loss(model: nn.Module, batch: tuple, beta: float = 1e-3) -> torch.Tensor:
    x, _ = batch
    reconstruction, mu, log_var = model(x)
    error = F.mse_loss(reconstruction, x, reduction="sum") / len(x)
    return error + beta * kl_to_prior(mu, log_var)
