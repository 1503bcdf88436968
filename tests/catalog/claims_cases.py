"""Claims the gate must check against evidence it already has, on models built from
each mechanism (none is one of the reports the rules came from):

- a value that is no tensor reached a layer while every batch field is a tensor: the
  model's code made it (``train-error`` naming the first module given it), not
  ``data-error``;
- only a warning that prints two shapes that differ is shape evidence; an output that
  no parameter moves (a normalization over a dimension of size 1) is ``no-gradient``,
  naming where it turns constant;
- a trainable tensor made anew at every forward (``.item()``, ``.tolist()``,
  ``torch.tensor(value)``) is a cut graph: ``no-gradient`` naming the parameter it
  copies, not ``unregistered-parameters``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from . import models
from .cases import Case

MLP, CNN, GRU = "MLP", "CNN", "GRU"


def features() -> tuple[torch.Tensor, torch.Tensor]:
    g = models._generator()
    return torch.randn(16, 10, generator=g), torch.arange(16) % 4


def cross_entropy(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


# --- a non-tensor the model made ------------------------------------------------------


class Summarizer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.project = nn.Linear(10, 8)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        hidden = self.project(x)
        return {"hidden": hidden, "summary": torch.tanh(hidden)}


class UnpacksADict(nn.Module):
    """Unpacks the dict a submodule returns: the names are the keys, not the values."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = Summarizer()
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden, summary = self.encoder(x)
        return self.head(summary)


class GRUOutputTuple(nn.Module):
    """Hands the GRU's (output, state) tuple to the head."""

    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(10, 16, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.gru(x.unsqueeze(1)))


class ListOfFeatures(nn.Module):
    """Converts features to a Python list on the way to the head."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(10, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x).tolist())


# --- an output no parameter moves -----------------------------------------------------


class NormalizedOverOne(nn.Module):
    """Class scores given a trailing dimension of size 1, then normalized by their sum
    over it: every score is 1.0."""

    def __init__(self) -> None:
        super().__init__()
        self.scores = nn.Linear(10, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = self.scores(x).exp().unsqueeze(-1)  # (B, 4, 1)
        return (scores / scores.sum(-1, keepdim=True)).squeeze(-1)


def one_hot_mse(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.mse_loss(model(x), F.one_hot(y, 4).float())


class SoftmaxOverOneChannel(nn.Module):
    """A one-channel mask predictor ending in nn.Softmax over the channels."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)
        self.probabilities = nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.probabilities(self.conv(x))  # (B, 1, H, W)


class ImplicitSoftmaxMask(nn.Module):
    """The same with F.softmax and no dim: torch picks dim 1 for 4-D input, and warns
    that the implicit dimension is deprecated."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softmax(self.conv(x))  # noqa: the bug under test


def masks() -> tuple[torch.Tensor, torch.Tensor]:
    g = models._generator()
    images = torch.randn(8, 3, 8, 8, generator=g)
    return images, (torch.rand(8, 1, 8, 8, generator=g) > 0.5).float()


def mask_bce(model: nn.Module, batch: tuple) -> torch.Tensor:
    images, target = batch
    return F.binary_cross_entropy(model(images).clamp(1e-6, 1 - 1e-6), target)


class OneColumnLogSoftmax(nn.Module):
    """A yes/no scorer with one output column, put through log_softmax over the
    columns: every log-probability is 0, and so is the NLL."""

    def __init__(self) -> None:
        super().__init__()
        self.score = nn.Linear(10, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.score(x), dim=-1)  # (B, 1)


def yes_no_nll(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.nll_loss(model(x), torch.zeros_like(y))


# --- a tensor made anew at every forward ----------------------------------------------


class PrototypesCopied(nn.Module):
    """Class prototypes copied through .tolist() into a new leaf at every call."""

    def __init__(self) -> None:
        super().__init__()
        self.prototypes = nn.Parameter(0.1 * torch.randn(4, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        table = torch.tensor(self.prototypes.tolist(), requires_grad=True)
        return x @ table.T


class TemperatureCopied(nn.Module):
    """A learned temperature read with .item() and rebuilt as a leaf at every call, over
    frozen pretrained scores."""

    def __init__(self) -> None:
        super().__init__()
        self.scores = nn.Linear(10, 4).requires_grad_(False)
        self.log_temperature = nn.Parameter(torch.tensor(2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        temperature = torch.tensor(self.log_temperature.item(), requires_grad=True)
        return self.scores(x) / temperature.exp()


class BareTensorScale(nn.Module):
    """The contrast: one bare tensor made in __init__ (the same object at every call)
    is an unregistered parameter."""

    def __init__(self) -> None:
        super().__init__()
        self.scores = nn.Linear(10, 4).requires_grad_(False)
        self.scale = torch.ones(4, requires_grad=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scores(x) * self.scale


CASES = [
    Case("dict-unpacked-into-keys", MLP, UnpacksADict, features, "train-error",
         loss=cross_entropy, bug="a submodule's dict unpacked into two names",
         says="'summary' is a key of the mapping module 'encoder' returned"),
    Case("gru-tuple-to-head", GRU, GRUOutputTuple, features, "train-error",
         loss=cross_entropy, bug="the GRU's (output, state) tuple passed on",
         says="a tuple reached module 'head', made by the model's code"),
    Case("features-as-a-list", MLP, ListOfFeatures, features, "train-error",
         loss=cross_entropy, bug="features turned into a Python list in forward",
         says="a list reached module 'head'"),
    Case("normalized-over-size-one", MLP, NormalizedOverOne, features, "no-gradient",
         loss=one_hot_mse, bug="scores normalized over a dimension of size 1",
         says="does not change when the parameters do"),
    Case("softmax-module-over-one-channel", CNN, SoftmaxOverOneChannel, masks,
         "no-gradient", loss=mask_bce, bug="nn.Softmax over a single channel",
         says="module 'probabilities' (Softmax)"),
    Case("implicit-softmax-over-one-channel", CNN, ImplicitSoftmaxMask, masks,
         "no-gradient", loss=mask_bce, bug="F.softmax without dim on a one-channel map",
         says="Implicit dimension choice for softmax"),
    Case("log-softmax-over-one-column", MLP, OneColumnLogSoftmax, features,
         "no-gradient", loss=yes_no_nll, bug="log_softmax over a single output column",
         says="the loss is 0 and no gradient reaches any parameter"),
    Case("prototypes-copied-by-tolist", MLP, PrototypesCopied, features, "no-gradient",
         loss=cross_entropy, bug="a parameter copied through .tolist() each call",
         says="a copy of parameter prototypes"),
    Case("temperature-copied-by-item", MLP, TemperatureCopied, features,
         "no-gradient", loss=cross_entropy,
         bug="a learned temperature read with .item() each call",
         says="a copy of parameter log_temperature"),
    Case("bare-tensor-scale", MLP, BareTensorScale, features,
         "unregistered-parameters", loss=cross_entropy,
         warnings=frozenset({"unregistered-parameters"}),
         bug="a trainable scale kept as a bare tensor", says="not registered"),
]  # fmt: skip
