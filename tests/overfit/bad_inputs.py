"""Factories with the mistakes users make, named in the gate's specs by the tests."""

from __future__ import annotations

import torch
from overfit_models import MLP, mlp_batch
from torch import nn
from torch.nn import functional as F


def model_that_raises():
    return MLP(features=16, hidden=-1)  # the user's bug: a negative width


def model_that_exits():
    raise SystemExit("usage: train.py --hidden N")  # argparse in a model's config


def batch_of_strings():
    return ["the cat sat", "on the mat"]


def not_a_module():
    return "MLP"


class NoParameters(nn.Module):
    def forward(self, x):
        return x.sum()


def per_sample_loss(model, batch):
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels, reduction="none")


def detached_loss(model, batch):
    inputs, labels = batch
    return F.cross_entropy(model(inputs).detach(), labels)


class LogitsOnly(nn.Module):
    """Returns logits: without a loss callable the gate cannot know the loss."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 4)

    def forward(self, inputs, labels):
        return self.linear(inputs)


def sgd_factory(params):
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)


def not_an_optimizer(params):
    return list(params)


def out_of_range_labels():
    inputs, labels = mlp_batch()
    return inputs, labels + 2  # labels 2..5 with 4 logits


number = 3


def negated_loss(model, batch):
    """Cross-entropy with its sign flipped: negative at init, falls without bound."""
    inputs, labels = batch
    return -F.cross_entropy(model(inputs), labels)
