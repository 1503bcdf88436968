"""Train the classifier on generated spirals: a plain loop, nothing hidden.

Run it through scripts/train.sh, or directly: ``python train.py --steps 500``.
Load the checkpoint back with ``torch.load(path)``, then
``Classifier(ClassifierConfig(**checkpoint["config"]))`` and ``load_state_dict``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict

import torch

from {{ cookiecutter.package_name }} import (
    Classifier,
    ClassifierConfig,
    spirals,
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--out", default="checkpoint.pt")
    return parser.parse_args(argv)


@torch.no_grad()
def accuracy(model: Classifier, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    logits, _ = model(x)  # (N, C)
    model.train()
    return (logits.argmax(dim=-1) == y).float().mean().item()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    x_train, y_train = spirals(2048, seed=args.seed)  # (N, 2), (N,)
    x_val, y_val = spirals(512, seed=args.seed + 1)
    model = Classifier(ClassifierConfig())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    for step in range(1, args.steps + 1):
        index = torch.randint(len(x_train), (args.batch_size,))  # (B,)
        _, loss = model(x_train[index], y_train[index])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % args.eval_every == 0 or step == args.steps:
            val = accuracy(model, x_val, y_val)
            print(f"step {step:5d}  loss {loss.item():.4f}  val accuracy {val:.3f}")

    # The config as a plain dict: torch.load's default, weights_only=True, refuses to
    # unpickle a class of ours.
    checkpoint = {"config": asdict(model.config), "model": model.state_dict()}
    torch.save(checkpoint, args.out)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
