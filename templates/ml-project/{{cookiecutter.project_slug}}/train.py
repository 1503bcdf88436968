"""Train the classifier on generated spirals: a plain loop, nothing hidden.

Run it through scripts/train.sh, or directly: ``python train.py --steps 500 --lr 3e-3``.
On N processes: ``torchrun --nproc-per-node N train.py``; each rank trains on its own
shard of the data, DistributedDataParallel averages the gradients, and rank 0 reports
and saves.
Every field of TrainConfig (the package's recipe.py) is an option, and the overfit-batch
gate trains with the same recipe at every commit.
Load the checkpoint back with ``torch.load(path, weights_only=True)``, then
``Classifier(ClassifierConfig(**checkpoint["config"]))`` and ``load_state_dict``.
"""

from __future__ import annotations

import argparse
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, fields

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler

from {{ cookiecutter.package_name }} import (
    Classifier,
    TrainConfig,
    build_model,
    make_optimizer,
    normalize,
    spirals,
    train_loader,
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    for field in fields(TrainConfig):  # --lr, --weight-decay, --batch-size, ...
        default = getattr(TrainConfig(), field.name)
        option = "--" + field.name.replace("_", "-")
        parser.add_argument(option, type=type(default), default=default)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--out", default="checkpoint.pt")
    return parser.parse_args(argv)


def forever(loader: DataLoader) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The loader's batches, epoch after epoch (reshuffled each time: a
    DistributedSampler is told the epoch, or every epoch would repeat one order)."""
    for epoch in itertools.count():
        if isinstance(loader.sampler, DistributedSampler):
            loader.sampler.set_epoch(epoch)
        yield from loader


def train_step(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> torch.Tensor:
    """One update on one batch. The overfit-batch gate calls this same function, so the
    loop it checks at every commit is the one that trains. Under DDP, ``backward()``
    averages the gradients over the ranks."""
    x, y = batch  # (B, 2), (B,)
    model.train()
    _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    scheduler.step()
    return loss


@torch.no_grad()
def accuracy(model: Classifier, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    logits, _ = model(x)  # (N, C)
    model.train()
    return (logits.argmax(dim=-1) == y).float().mean().item()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    config = TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})
    distributed = "RANK" in os.environ  # started by torchrun
    if distributed:
        dist.init_process_group("gloo")  # the CPU's backend: this loop runs on the CPU
    is_first_rank = not distributed or dist.get_rank() == 0
    torch.manual_seed(config.seed)
    readings, y_val = spirals(512, seed=config.seed + 1)  # (N, 2), (N,)
    x_val = normalize(readings)
    model = build_model()  # DistributedDataParallel under torchrun
    classifier = model.module if distributed else model
    optimizer, scheduler = make_optimizer(model.parameters(), config)
    batches = forever(train_loader(config))

    for step in range(1, config.steps + 1):
        loss = train_step(model, next(batches), optimizer, scheduler)
        if not is_first_rank:
            continue
        if step % args.eval_every == 0 or step == config.steps:
            # The unwrapped model: DDP's forward may sync with ranks not evaluating.
            val = accuracy(classifier, x_val, y_val)
            lr = scheduler.get_last_lr()[0]
            print(f"step {step:5d}  loss {loss.item():.4f}  lr {lr:.2e}  val {val:.3f}")

    # The config as a plain dict: torch.load's default, weights_only=True, refuses to
    # unpickle a class of ours.
    if is_first_rank:
        config_dict = asdict(classifier.config)
        checkpoint = {"config": config_dict, "model": classifier.state_dict()}
        torch.save(checkpoint, args.out)
        print(f"saved {args.out}")
    if distributed:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
