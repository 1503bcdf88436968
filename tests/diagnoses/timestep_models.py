"""A family no catalog has: a classifier conditioned on a diffusion timestep, an
index into a noise schedule of 1000 steps, beside a 10-wide head. The timesteps
exceed the head's width and are no class targets."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

B, SIDE, CLASSES, STEPS = 16, 8, 10, 1000


class TimestepClassifier(nn.Module):
    def __init__(self, in_channels: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, 8, 3, padding=1)
        self.register_buffer("alphas", torch.linspace(1.0, 0.01, STEPS + 1))
        self.head = nn.Linear(8, CLASSES)

    def forward(self, images: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor:
        noise_level = self.alphas[timesteps]  # (B,)
        features = self.conv(images).mean(dim=(2, 3))  # (B, 8)
        return self.head(features * noise_level[:, None])  # (B, CLASSES)


def timestep_batch(
    first_label: int = 0, last_label: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(images, timesteps up to 1000, labels from ``first_label``), the last label
    replaced by ``last_label`` when given."""
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(B, 3, SIDE, SIDE, generator=generator)
    timesteps = torch.randint(0, STEPS + 1, (B,), generator=generator)
    timesteps[0] = STEPS
    labels = torch.arange(B) % CLASSES + first_label
    if last_label is not None:
        labels[-1] = last_label
    return images, timesteps, labels


def timestep_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    images, timesteps, labels = batch
    return F.cross_entropy(model(images, timesteps), labels)


class CheckedTimestepClassifier(TimestepClassifier):
    """The same classifier computing its own loss, as Hugging Face models do with
    ``labels=``, after checking its inputs with Python numbers: timesteps against
    the schedule's length, labels against the head's width. A check raises its own
    ValueError before the loss: no torch operation ever sees a value out of range."""

    def __init__(self, in_channels: int = 3, schedule: int = STEPS + 1) -> None:
        super().__init__(in_channels)
        self.schedule = schedule  # the timesteps the check allows: 0..schedule-1

    def forward(
        self, images: torch.Tensor, timesteps: torch.Tensor, labels: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not int(timesteps.max()) < self.schedule:
            raise ValueError(f"timesteps index a schedule of {self.schedule} steps")
        if labels.max().item() >= self.head.out_features:
            raise ValueError("a label names no class of the head")
        logits = super().forward(images, timesteps)
        return logits, F.cross_entropy(logits, labels)
