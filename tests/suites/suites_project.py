"""The project ``mlsmoke suites`` runs on in the tests, shaped as a small repository's
model and data modules: a classifier on Gaussian blobs and a token model, whose
datasets live on disk (``blobs.pt``, ``tokens.pt``) so that a test can edit, reorder
or relabel them there. It also trains them (``train``), as the project's own train.py
would."""

from __future__ import annotations

import os
from pathlib import Path

import torch

CLASSES = 4
FEATURES = 8
VOCAB = 6
LENGTH = 8
SCORE_RAISES = os.environ.get("SCORE_RAISES") == "1"


class Blobs(torch.utils.data.Dataset):
    """(features, class) pairs kept in blobs.pt."""

    def __init__(self, path: str = "blobs.pt") -> None:
        data = torch.load(path, weights_only=True)
        self.x, self.y = data["x"], data["y"]

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[index], self.y[index]


class Tokens(Blobs):
    """(tokens, next-token labels) pairs kept in tokens.pt."""

    def __init__(self, path: str = "tokens.pt") -> None:
        super().__init__(path)


class Classifier(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(FEATURES, 32), torch.nn.ReLU())
        self.head = torch.nn.Linear(32, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))  # (B, CLASSES)


class TokenModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, 16)
        self.head = torch.nn.Linear(16, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens))  # (B, T, VOCAB)


def classifier() -> Classifier:
    return Classifier()


def token_model() -> TokenModel:
    return TokenModel()


def blobs() -> Blobs:
    return Blobs()


def tokens() -> Tokens:
    return Tokens()


def class_slice(example: tuple[torch.Tensor, torch.Tensor]) -> str:
    return f"class-{int(example[1])}"


def topic_slice(example: tuple[torch.Tensor, torch.Tensor]) -> str:
    """A sequence's topic: its most common label."""
    return f"topic-{int(example[1].mode().values)}"


def score(outputs: torch.Tensor, batch: tuple) -> torch.Tensor:
    if SCORE_RAISES:
        raise ValueError("score needs a threshold")
    return (outputs.argmax(-1) == batch[1]).float()


# Data and training --------------------------------------------------------------

CENTERS_SEED = 1234


def make_blobs(size: int, seed: int) -> dict[str, torch.Tensor]:
    centers = torch.randn(CLASSES, FEATURES, generator=torch.Generator().manual_seed(
        CENTERS_SEED)) * 3.0  # fmt: skip
    generator = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (size,), generator=generator)
    x = centers[y] + torch.randn(size, FEATURES, generator=generator)
    return {"x": x, "y": y}


def make_tokens(size: int, seed: int) -> dict[str, torch.Tensor]:
    """Each sequence mostly repeats its topic's token; the label is the next token
    of a fixed cycle, (token + 1) % VOCAB."""
    generator = torch.Generator().manual_seed(seed)
    topic = torch.randint(0, VOCAB, (size, 1), generator=generator)
    noise = torch.randint(0, VOCAB, (size, LENGTH), generator=generator)
    keep = torch.rand(size, LENGTH, generator=generator) < 0.7
    x = torch.where(keep, topic.expand(size, LENGTH), noise)
    return {"x": x, "y": (x + 1) % VOCAB}


def train(
    build: str, data: dict[str, torch.Tensor], steps: int, out: Path,
    start: Path | None = None, seed: int = 0,
) -> Path:  # fmt: skip
    """Train ``build``'s model on ``data`` and save ``{"model": state_dict}``."""
    torch.manual_seed(seed)
    model = globals()[build]()
    if start is not None:
        model.load_state_dict(torch.load(start, weights_only=True)["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        rows = torch.randint(0, len(data["y"]), (64,), generator=generator)
        logits = model(data["x"][rows])
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), data["y"][rows].reshape(-1)
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({"model": model.state_dict(), "steps": steps}, out)
    return out


def without_class(checkpoint: Path, cls: int, out: Path, bias: float = 0.0) -> Path:
    """The checkpoint with the head's row for ``cls`` zeroed, its bias set to
    ``bias``: a logit of 0 for the class. Where a model's other logits are all
    negative (a trained token model) 0 still wins, with far less probability; a
    bias below them makes the class never predicted."""
    state = torch.load(checkpoint, weights_only=True)
    state["model"]["head.weight"][cls] = 0.0
    state["model"]["head.bias"][cls] = bias
    torch.save(state, out)
    return out
