"""Bugs of the batch that a repair tried on a copy proves (verdict/repairs/): each
batch or loss below is one users write, and one field's change makes the step run."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .models import CLASSES, classification_batch, image_batch


def one_based_actions() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = classification_batch()
    return x, y + 1  # actions numbered 1..C, as the environment numbers them


def categorical_policy_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, actions = batch
    policy = torch.distributions.Categorical(logits=model(x))
    return -policy.log_prob(actions).mean()


def float_action_indices() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = classification_batch()
    return x, y.float().unsqueeze(1)  # read from a float array of the replay buffer


def chosen_action_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, actions = batch
    return -model(x).log_softmax(-1).gather(1, actions).mean()


def integer_multi_hot() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = classification_batch()
    tags = F.one_hot(y, CLASSES) | F.one_hot((y + 1) % CLASSES, CLASSES)
    return x, tags  # int64 multi-hot tags


def multi_label_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, tags = batch
    return F.binary_cross_entropy_with_logits(model(x), tags)


def one_hot_labels() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = classification_batch()
    return x, F.one_hot(y, CLASSES).float()  # one-hot already


def label_smoothing_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    """Builds its own one-hot target, as label smoothing code does."""
    x, y = batch
    smooth = F.one_hot(y, CLASSES).float() * 0.9 + 0.1 / CLASSES
    return -(smooth * model(x).log_softmax(-1)).sum(-1).mean()


def void_marked_labels() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = classification_batch()
    y = y.clone()
    y[::6] = 255  # "void" in segmentation datasets
    return x, y


def integer_padding_mask() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x, y = classification_batch()
    keep = torch.ones(len(y), dtype=torch.long)
    keep[::8] = 0
    return x, y, keep  # 0/1 as int64, from a numpy array


def masked_loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y, keep = batch
    logits = model(x).masked_fill(~keep[:, None], 0.0)  # ~ of an int64 is not a mask
    return F.cross_entropy(logits, y)


def channels_last_images() -> tuple[torch.Tensor, torch.Tensor]:
    images, labels = image_batch()
    return images.permute(0, 2, 3, 1).contiguous(), labels  # (B, H, W, 1) from PIL
