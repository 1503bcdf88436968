"""Models of families no catalog holds, each with a twin, for the interventions'
tests: hand-written low-rank adapters on a frozen attention encoder, and a sentence
encoder whose pooler forward never calls, trained contrastively.

Tiny and seeded: each run takes about a second on one CPU thread.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

VOCAB, WIDTH, LENGTH, SAMPLES, CLASSES = 32, 16, 6, 8, 4


def _generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --- low-rank adapters on a frozen base ---


class LowRankAdapted(nn.Module):
    """A frozen linear layer plus a trainable low-rank update: ``W x + B A x``."""

    def __init__(self, base: nn.Linear, rank: int = 8) -> None:
        super().__init__()
        self.base = base.requires_grad_(False)
        self.adapter_down = nn.Parameter(torch.randn(rank, base.in_features) * 0.1)
        self.adapter_up = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + x @ self.adapter_down.T @ self.adapter_up.T


class AttentionClassifier(nn.Module):
    """A 'pretrained' one-head attention encoder over token ids, mean-pooled."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.query = nn.Linear(WIDTH, WIDTH)
        self.value = nn.Linear(WIDTH, WIDTH)
        self.classifier = nn.Linear(WIDTH, CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)  # (B, T, C)
        scores = self.query(h) @ h.transpose(1, 2) / WIDTH**0.5  # (B, T, T)
        h = h + scores.softmax(-1) @ self.value(h)
        return self.classifier(h.mean(1))  # (B, CLASSES)


def adapted_classifier() -> nn.Module:
    """The encoder frozen, every linear layer adapted: the usual LoRA recipe."""
    model = AttentionClassifier().requires_grad_(False)
    for name in ("query", "value", "classifier"):
        setattr(model, name, LowRankAdapted(getattr(model, name)))
    return model


def token_batch() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(VOCAB, (SAMPLES, LENGTH), generator=_generator())
    return ids, torch.arange(SAMPLES) % CLASSES


def classify(model: nn.Module, batch: tuple) -> torch.Tensor:
    ids, labels = batch
    return F.cross_entropy(model(ids), labels)


def adam(lr: float):
    def build(parameters):
        trainable = [p for p in parameters if p.requires_grad]
        return torch.optim.Adam(trainable, lr=lr)

    return build


# --- a sentence encoder whose pooler forward never calls ---


class SentenceEncoder(nn.Module):
    """Token embeddings, a mixing layer, mean pooling; the pooler a library model
    builds by default is never called (a mean of the states embeds the sentence)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.mix = nn.Linear(WIDTH, WIDTH)
        self.pooler = nn.Linear(WIDTH, WIDTH)  # built, never called

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.mix(self.embed(ids)))  # (B, T, C)
        return F.normalize(h.mean(1), dim=-1)  # (B, C)


def sentence_pairs() -> tuple[torch.Tensor, torch.Tensor]:
    anchors = torch.randint(VOCAB, (SAMPLES, LENGTH), generator=_generator(1))
    positives = torch.randint(VOCAB, (SAMPLES, LENGTH), generator=_generator(2))
    return anchors, positives


def pairs_with_a_duplicate_positive() -> tuple[torch.Tensor, torch.Tensor]:
    """Pairs of anchors share one positive: neither can tell its own from the
    other's, and the loss has a floor of log 2 on each of their rows."""
    anchors, positives = sentence_pairs()
    positives[1], positives[3] = positives[0], positives[2]
    return anchors, positives


def in_batch_contrastive(model: nn.Module, batch: tuple) -> torch.Tensor:
    anchors, positives = batch
    scores = model(anchors) @ model(positives).T / 0.1  # (B, B)
    return F.cross_entropy(scores, torch.arange(len(scores)))


# --- a waveform encoder frozen under a linear probe ---


class WaveformClassifier(nn.Module):
    """A 1-D convolution over raw waveforms, pooled into a 2-wide embedding, and a
    linear head over it."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.encoder = nn.Sequential(
            nn.Conv1d(1, 16, kernel_size=5, padding=2), nn.ReLU()
        )
        self.bottleneck = nn.Linear(16, 2)
        self.head = nn.Linear(2, CLASSES)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        h = self.encoder(waves.unsqueeze(1)).mean(-1)  # (B, 16)
        return self.head(self.bottleneck(h))  # (B, CLASSES)


def encoder_frozen_by_mistake() -> nn.Module:
    """The encoder and bottleneck frozen: the copy of a linear-probe recipe."""
    model = WaveformClassifier()
    model.encoder.requires_grad_(False)
    model.bottleneck.requires_grad_(False)
    return model


def waveforms() -> tuple[torch.Tensor, torch.Tensor]:
    waves = torch.randn(2 * SAMPLES, 32, generator=_generator(3))
    return waves, torch.arange(2 * SAMPLES) % CLASSES


def waveforms_labelled_twice() -> tuple[torch.Tensor, torch.Tensor]:
    """Each waveform twice, under two labels: no model can fit both."""
    waves, labels = waveforms()
    half = len(waves) // 2
    waves[half:] = waves[:half]
    labels[half:] = (labels[:half] + 1) % CLASSES
    return waves, labels


class WaveformClassifierDetached(WaveformClassifier):
    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        h = self.encoder(waves.unsqueeze(1)).mean(-1).detach()  # bug: cut mid-forward
        return self.head(self.bottleneck(h))


# --- a forecaster whose output layer forward builds anew ---


HISTORY, HORIZON = 12, 3


class Forecaster(nn.Module):
    """A GRU over a series' history and a linear layer for the next steps."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.rnn = nn.GRU(1, WIDTH, batch_first=True)
        self.out = nn.Linear(WIDTH, HORIZON)

    def forward(self, history: torch.Tensor) -> torch.Tensor:
        _, h = self.rnn(history.unsqueeze(-1))  # (1, B, C)
        return self.project(h[-1])  # (B, HORIZON)

    def project(self, h: torch.Tensor) -> torch.Tensor:
        return self.out(h)


class ForecasterBuildingItsHead(Forecaster):
    def project(self, h: torch.Tensor) -> torch.Tensor:
        return nn.Linear(WIDTH, HORIZON)(h)  # bug: a new layer at every call


def series() -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.linspace(0, 6, HISTORY + HORIZON)
    phases = torch.rand(SAMPLES, 1, generator=_generator(4)) * 6
    values = torch.sin(t + phases)  # (B, HISTORY + HORIZON)
    return values[:, :HISTORY], values[:, HISTORY:]


def squared_error(model: nn.Module, batch: tuple) -> torch.Tensor:
    history, future = batch
    return F.mse_loss(model(history), future)


# --- a note-sequence model whose targets are a slice of its inputs ---


NOTES = 24


class NoteModel(nn.Module):
    """A GRU over MIDI note ids predicting the next note."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(NOTES, WIDTH)
        self.rnn = nn.GRU(WIDTH, WIDTH, batch_first=True)
        self.out = nn.Linear(WIDTH, NOTES)

    def forward(self, notes: torch.Tensor) -> torch.Tensor:
        h, _ = self.rnn(self.embed(notes))  # (B, T, C)
        return self.out(h)  # (B, T, NOTES)


def _melodies() -> torch.Tensor:
    return torch.randint(NOTES, (SAMPLES, LENGTH + 1), generator=_generator(5))


def shifted_melodies() -> tuple[torch.Tensor, torch.Tensor]:
    melodies = _melodies()
    return melodies[:, :-1], melodies[:, 1:]  # the targets: a strided view


def shifted_melodies_copied() -> tuple[torch.Tensor, torch.Tensor]:
    melodies = _melodies()
    return melodies[:, :-1].clone(), melodies[:, 1:].clone()


def next_note(model: nn.Module, batch: tuple) -> torch.Tensor:
    notes, targets = batch
    logits = model(notes)  # (B, T, NOTES)
    return F.cross_entropy(logits.view(-1, NOTES), targets.view(-1))


# --- a denoiser given channels-last images ---


STEPS, SIDE, CHANNELS = 1000, 8, 3


class Denoiser(nn.Module):
    """Predicts the noise added to an image at a timestep: a convolution, a
    timestep embedding added per channel, a convolution back."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Conv2d(CHANNELS, WIDTH, 3, padding=1)
        self.time = nn.Embedding(STEPS, WIDTH)
        self.outp = nn.Conv2d(WIDTH, CHANNELS, 3, padding=1)

    def forward(self, noisy: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor:
        h = self.inp(noisy) + self.time(timesteps)[:, :, None, None]  # (B, C, H, W)
        return self.outp(torch.relu(h))  # (B, CHANNELS, H, W)


def _noised(channels_last: bool) -> dict[str, torch.Tensor]:
    g = _generator(6)
    images = torch.randn(SAMPLES, CHANNELS, SIDE, SIDE, generator=g)
    noise = torch.randn(SAMPLES, CHANNELS, SIDE, SIDE, generator=g)
    timesteps = torch.randint(STEPS, (SAMPLES,), generator=g)
    noisy = images + noise
    if channels_last:  # as an image library loads them: (B, H, W, C)
        noisy, noise = noisy.permute(0, 2, 3, 1), noise.permute(0, 2, 3, 1)
    return {"noisy": noisy.contiguous(), "noise": noise.contiguous(),
            "timesteps": timesteps}  # fmt: skip


def channels_last_noised() -> dict[str, torch.Tensor]:
    return _noised(channels_last=True)


def channels_first_noised() -> dict[str, torch.Tensor]:
    return _noised(channels_last=False)


def noise_prediction(model: nn.Module, batch: dict) -> torch.Tensor:
    return F.mse_loss(model(batch["noisy"], batch["timesteps"]), batch["noise"])


# --- a cell segmenter given one-hot masks where it takes a class map ---


class CellSegmenter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(
            nn.Conv2d(1, WIDTH, 3, padding=1), nn.ReLU(),
            nn.Conv2d(WIDTH, CLASSES, 3, padding=1),
        )  # fmt: skip

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.net(images)  # (B, CLASSES, H, W)


def _cells() -> tuple[torch.Tensor, torch.Tensor]:
    g = _generator(7)
    images = torch.randn(SAMPLES, 1, SIDE, SIDE, generator=g)
    classes = torch.randint(CLASSES, (SAMPLES, 1, SIDE, SIDE), generator=g)
    return images, classes


def cells_with_class_maps() -> tuple[torch.Tensor, torch.Tensor]:
    return _cells()  # masks (B, 1, H, W): one channel of class ids


def cells_with_one_hot_masks() -> tuple[torch.Tensor, torch.Tensor]:
    images, classes = _cells()
    masks = F.one_hot(classes[:, 0], CLASSES).permute(0, 3, 1, 2).float()
    return images, masks  # (B, CLASSES, H, W): one channel per class


def segmentation_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    images, masks = batch
    return F.cross_entropy(model(images), masks.squeeze(1).long())


# --- a padded-sequence encoder given an int64 attention mask ---


class PaddedEncoder(nn.Module):
    """Self-attention over padded token sequences; the mask says which keys are
    real tokens."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.classifier = nn.Linear(WIDTH, CLASSES)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.embed(ids)).chunk(3, dim=-1)  # (B, T, C) each
        keys = mask[:, None, :]  # (B, 1, T): attend to real tokens only
        h = F.scaled_dot_product_attention(q, k, v, attn_mask=keys)
        return self.classifier(h.mean(1))  # (B, CLASSES)


def _padded(mask_dtype: torch.dtype) -> dict[str, torch.Tensor]:
    ids, labels = token_batch()
    lengths = torch.tensor([LENGTH, LENGTH - 2] * (SAMPLES // 2))
    mask = torch.arange(LENGTH)[None, :] < lengths[:, None]  # (B, T)
    return {"ids": ids, "mask": mask.to(mask_dtype), "labels": labels}


def padded_with_int64_mask() -> dict[str, torch.Tensor]:
    return _padded(torch.int64)  # as a tokenizer returns attention_mask


def padded_with_bool_mask() -> dict[str, torch.Tensor]:
    return _padded(torch.bool)


def classify_padded(model: nn.Module, batch: dict) -> torch.Tensor:
    return F.cross_entropy(model(batch["ids"], batch["mask"]), batch["labels"])


# --- a keyword spotter trained with smoothed labels ---


class KeywordSpotter(nn.Module):
    """Frames of audio features, a GRU, the last state classified."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.rnn = nn.GRU(WIDTH, WIDTH, batch_first=True)
        self.classifier = nn.Linear(WIDTH, CLASSES)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        _, h = self.rnn(frames)  # (1, B, C)
        return self.classifier(h[-1])  # (B, CLASSES)


def utterances() -> tuple[torch.Tensor, torch.Tensor]:
    frames = torch.randn(SAMPLES, LENGTH, WIDTH, generator=_generator(8))
    return frames, torch.arange(SAMPLES) % CLASSES


def smoothed(smoothing: float):
    criterion = nn.CrossEntropyLoss(label_smoothing=smoothing)

    def loss(model: nn.Module, batch: tuple) -> torch.Tensor:
        frames, labels = batch
        return criterion(model(frames), labels)

    return loss
