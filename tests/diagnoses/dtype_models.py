"""Fields of a dtype that a library op refuses deep inside, with correct twins: a
text encoder whose padding mask is the tokenizer's int64 ``attention_mask`` where
``nn.TransformerEncoder`` wants bool, and a denoiser whose timesteps are floats where
the noise schedule indexes with them.

Tiny and seeded: each run takes about a second on one CPU thread.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

VOCAB, WIDTH, TOKENS, SAMPLES, CLASSES = 50, 16, 8, 8, 3
STEPS, CHANNELS, SIDE = 100, 2, 4


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


class TextEncoder(nn.Module):
    """Token embeddings, one encoder layer, mean pooling, a class head."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        layer = nn.TransformerEncoderLayer(WIDTH, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, input_ids, padding_mask):  # padding_mask: True at a pad
        hidden = self.encoder(self.embed(input_ids), src_key_padding_mask=padding_mask)
        return self.head(hidden.mean(dim=1))  # (B, classes)


def _tokens() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    ids = torch.randint(1, VOCAB, (SAMPLES, TOKENS), generator=_generator(1))
    attention_mask = torch.ones(SAMPLES, TOKENS, dtype=torch.long)
    attention_mask[::2, -3:] = 0  # padded
    labels = torch.randint(0, CLASSES, (SAMPLES,), generator=_generator(2))
    return ids, attention_mask, labels


def tokenizer_mask_batch() -> dict[str, torch.Tensor]:
    """The tokenizer's mask (int64, 1 = keep) passed on as the padding mask."""
    ids, attention_mask, labels = _tokens()
    return {"input_ids": ids, "padding_mask": attention_mask, "labels": labels}


def padding_mask_batch() -> dict[str, torch.Tensor]:
    ids, attention_mask, labels = _tokens()
    return {"input_ids": ids, "padding_mask": attention_mask == 0, "labels": labels}


def classify(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    logits = model(batch["input_ids"], batch["padding_mask"])
    return F.cross_entropy(logits, batch["labels"])


class Denoiser(nn.Module):
    """Predicts the noise added at a timestep: a conv net told the timestep."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(
            nn.Conv2d(CHANNELS + 1, 32, 3, padding=1),
            nn.SiLU(),
            nn.Conv2d(32, CHANNELS, 3, padding=1),
        )

    def forward(self, noisy: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor:
        level = (timesteps.float() / STEPS).view(-1, 1, 1, 1)
        level = level.expand(-1, 1, *noisy.shape[2:])
        return self.net(torch.cat([noisy, level], dim=1))  # (B, C, H, W)


def scheduler():
    from diffusers import DDPMScheduler

    return DDPMScheduler(num_train_timesteps=STEPS)


def _images() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    images = torch.randn(SAMPLES, CHANNELS, SIDE, SIDE, generator=_generator(3))
    noise = torch.randn(SAMPLES, CHANNELS, SIDE, SIDE, generator=_generator(4))
    timesteps = torch.randint(0, STEPS, (SAMPLES,), generator=_generator(5))
    return images, noise, timesteps


def float_timestep_batch() -> dict[str, torch.Tensor]:
    """Timesteps drawn as floats (``torch.rand(B) * T``, rounded): indices all the
    same, of a dtype an index cannot have."""
    images, noise, timesteps = _images()
    return {"images": images, "noise": noise, "timesteps": timesteps.float()}


def timestep_batch() -> dict[str, torch.Tensor]:
    images, noise, timesteps = _images()
    return {"images": images, "noise": noise, "timesteps": timesteps}


def denoising(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    noisy = scheduler().add_noise(batch["images"], batch["noise"], batch["timesteps"])
    return F.mse_loss(model(noisy, batch["timesteps"]), batch["noise"])
