"""A repository shaped like pytorch/examples' mnist, written for real: an argparse
``train.py`` whose ``main()`` builds a ``DataLoader`` (worker processes, shuffled), a
small classifier of ``model.py``, Adam and a ``StepLR`` per epoch, and trains with a
``train_one_epoch(model, loader, optimizer, device, ...)`` loop; it writes to
``--output-dir`` and picks CUDA unless ``--no-cuda``. The data are made in code
(``data.py``): nothing is downloaded. Each mistake a test commits is a ``Change``: one
text replaced in one file.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

DATA = '''\
"""A synthetic classification set: features and a class for each, made in code."""

import torch
from torch.utils.data import TensorDataset


def make_dataset(size=512, features=20, classes=4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(size, features, generator=generator)
    targets = torch.randint(0, classes, (size,), generator=generator)
    return TensorDataset(inputs, targets)
'''

MODEL = '''\
"""A small classifier: depth x (Linear, ReLU), then the class scores."""

from torch import nn


class Classifier(nn.Module):
    def __init__(self, features, hidden_size, classes, num_layers):
        super().__init__()
        layers = []
        width = features
        for _ in range(num_layers):
            layers += [nn.Linear(width, hidden_size), nn.ReLU()]
            width = hidden_size
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.body(x))  # (B, classes)
'''

TRAIN = '''\
"""Train the classifier: python train.py --epochs 3 --no-cuda"""

import argparse
import os

import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader

from data import make_dataset
from model import Classifier


def train_one_epoch(model, loader, optimizer, device, epoch, log_interval):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print(f"epoch {epoch} batch {batch_idx}: loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser(description="Train a small classifier")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--hidden-size", type=int, default=256)
    parser.add_argument("--num-layers", type=int, default=3)
    parser.add_argument("--no-cuda", action="store_true", default=False)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=50)
    parser.add_argument("--output-dir", default="runs")
    parser.add_argument("--save-model", action="store_true")
    args = parser.parse_args()

    use_cuda = not args.no_cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    torch.manual_seed(args.seed)
    loader = DataLoader(
        make_dataset(),
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=args.num_workers,
    )
    model = Classifier(20, args.hidden_size, 4, args.num_layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    os.makedirs(args.output_dir, exist_ok=True)
    for epoch in range(1, args.epochs + 1):
        train_one_epoch(model, loader, optimizer, device, epoch, args.log_interval)
        scheduler.step()
        with open(os.path.join(args.output_dir, "log.txt"), "a") as log:
            log.write(f"epoch {epoch} done\\n")
    if args.save_model:
        torch.save(model.state_dict(), os.path.join(args.output_dir, "model.pt"))


if __name__ == "__main__":
    main()
'''


class Change(NamedTuple):
    """One mistake (or legitimate edit): ``old`` replaced by ``new`` in ``file``."""

    file: str
    old: str
    new: str


LR_3E7 = Change("train.py", "default=3e-3", "default=3e-7")
NO_ZERO_GRAD = Change("train.py", "        optimizer.zero_grad()\n", "")
DETACHED_BODY = Change(
    "model.py", "self.head(self.body(x))", "self.head(self.body(x).detach())"
)


def write_argparse_repo(root: Path, *changes: Change) -> Path:
    """The repository at ``root`` with ``changes`` made; no mlsmoke configuration."""
    root.mkdir(parents=True, exist_ok=True)
    files = {"data.py": DATA, "model.py": MODEL, "train.py": TRAIN}
    for change in changes:
        assert change.old in files[change.file], change
        files[change.file] = files[change.file].replace(change.old, change.new)
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "README.md").write_text("# classifier\n\nTrain with `python train.py`.\n")
    return root
