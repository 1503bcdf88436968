"""Projects' distributed code, correct and with each bug the ranks' checks name: tiny
models and loaders a gate with ``world-size = 2`` trains on gloo in seconds."""

from __future__ import annotations

import math
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

SAMPLES, FEATURES, CLASSES, BATCH = 32, 8, 4, 8


def _dataset() -> TensorDataset:
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(SAMPLES, FEATURES, generator=generator)
    return TensorDataset(inputs, torch.arange(SAMPLES) % CLASSES)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh())
        self.head = nn.Linear(32, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def classifier_loss(model: nn.Module, batch) -> torch.Tensor:
    inputs, labels = batch
    return nn.functional.cross_entropy(model(inputs), labels)


# --- correct -----------------------------------------------------------------------


def sharded_loader() -> DataLoader:
    """A loader each rank reads its own shard from."""
    dataset = _dataset()
    return DataLoader(dataset, batch_size=BATCH, sampler=DistributedSampler(dataset))


def ddp_classifier() -> nn.Module:
    """A factory that wraps the model itself: the gate wraps nothing more."""
    return DistributedDataParallel(Classifier())


def fsdp_classifier() -> nn.Module:
    from torch.distributed.fsdp import fully_shard

    model = Classifier()
    fully_shard(model)
    return model


class EpochLoader:
    """A loader object that drives its own epochs, telling its sampler each one."""

    def __init__(self, tells_the_epoch: bool = True) -> None:
        dataset = _dataset()
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=BATCH, sampler=self.sampler)
        self.tells_the_epoch, self.epoch = tells_the_epoch, 0

    def __iter__(self):
        if self.tells_the_epoch:
            self.sampler.set_epoch(self.epoch)
        self.epoch += 1
        yield from self.loader  # each epoch


def epoch_loader() -> EpochLoader:
    return EpochLoader()


BASE_LR = 0.01  # Adam's, for one process


def adam_scaled_linearly(params) -> torch.optim.Optimizer:
    """The linear scaling rule: N ranks, an N times larger global batch."""
    return torch.optim.Adam(params, lr=BASE_LR * dist.get_world_size())


def adam_scaled_by_sqrt(params) -> torch.optim.Optimizer:
    """The square-root scaling rule."""
    return torch.optim.Adam(params, lr=BASE_LR * math.sqrt(dist.get_world_size()))


def averaging_step(model, batch, optimizer) -> torch.Tensor:
    """A step function that averages the gradients by hand, as DDP does."""
    optimizer.zero_grad()
    loss = classifier_loss(model, batch)
    loss.backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
        parameter.grad /= dist.get_world_size()
    optimizer.step()
    return loss


def broadcast_classifier() -> nn.Module:
    """A plain model whose parameters are rank 0's, for a step that syncs by hand."""
    model = Classifier()
    for parameter in model.parameters():
        dist.broadcast(parameter.data, src=0)
    return model


# --- bugs ----------------------------------------------------------------------------


def unsharded_loader() -> DataLoader:
    """No DistributedSampler: every rank reads the same samples."""
    return DataLoader(_dataset(), batch_size=BATCH, shuffle=True)


class WithUnusedHead(Classifier):
    def __init__(self) -> None:
        super().__init__()
        self.aux_head = nn.Linear(32, CLASSES)  # never called in forward


def summing_step(model, batch, optimizer) -> torch.Tensor:
    """All-reduces the gradients and forgets to divide: a sum over the ranks."""
    optimizer.zero_grad()
    loss = classifier_loss(model, batch)
    loss.backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
    optimizer.step()
    return loss


def unsynced_step(model, batch, optimizer) -> torch.Tensor:
    """Never all-reduces: each rank follows its own gradient."""
    optimizer.zero_grad()
    loss = classifier_loss(model, batch)
    loss.backward()
    optimizer.step()
    return loss


def rank_zero_logs_loss(model: nn.Module, batch) -> torch.Tensor:
    """A loss that all-reduces a log value on rank 0 only."""
    loss = classifier_loss(model, batch)
    if dist.get_rank() == 0:
        logged = loss.detach().clone()
        dist.all_reduce(logged)  # only rank 0 gets here
    return loss


def rank_zero_evaluates(model, batch, optimizer) -> torch.Tensor:
    """Averages by hand, then waits for the other ranks on rank 0 only."""
    loss = averaging_step(model, batch, optimizer)
    if dist.get_rank() == 0:
        dist.barrier()  # an evaluation only rank 0 runs
    return loss


class BatchNormClassifier(Classifier):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, 32), nn.BatchNorm1d(32))


class CpuSyncBatchNorm(nn.SyncBatchNorm):
    """SyncBatchNorm as its CUDA kernel computes it, on the CPU over gloo (torch's
    raises on CPU input): the batch statistics are the sums over every rank's samples,
    all-reduced in the forward, and their gradients all-reduced in the backward."""

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if not (self.training and dist.is_initialized() and dist.get_world_size() > 1):
            return nn.modules.batchnorm._BatchNorm.forward(self, input)
        from torch.distributed.nn.functional import all_reduce

        count = all_reduce(torch.tensor(float(input.shape[0])))
        mean = all_reduce(input.sum(0)) / count  # (C,)
        var = all_reduce(((input - mean) ** 2).sum(0)) / count  # biased, as BN's
        with torch.no_grad():
            self.num_batches_tracked.add_(1)
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(var * count / (count - 1), self.momentum)
        normalized = (input - mean) / torch.sqrt(var + self.eps)
        return normalized * self.weight + self.bias


def sync_batchnorm_classifier() -> nn.Module:
    """BatchNormClassifier converted by torch, its SyncBatchNorm simulated on the CPU,
    wrapped in DDP. DDP refuses SyncBatchNorm on CPU modules: its check is lifted
    for this one construction (on GPUs there is nothing to lift)."""
    model = nn.SyncBatchNorm.convert_sync_batchnorm(BatchNormClassifier())
    for module in model.modules():
        if type(module) is nn.SyncBatchNorm:
            module.__class__ = CpuSyncBatchNorm
    gpu_only = DistributedDataParallel._passing_sync_batchnorm_handle
    DistributedDataParallel._passing_sync_batchnorm_handle = lambda ddp, module: None
    try:
        return DistributedDataParallel(model)
    finally:
        DistributedDataParallel._passing_sync_batchnorm_handle = gpu_only


def loss_times_world_size(model: nn.Module, batch) -> torch.Tensor:
    """Scales the loss by the number of ranks, on top of DDP's mean."""
    return classifier_loss(model, batch) * dist.get_world_size()


def adam_scaled_twice(params) -> torch.optim.Optimizer:
    """The lr scaled by the world size in the config, then again at construction."""
    lr = BASE_LR * int(os.environ["WORLD_SIZE"])
    return torch.optim.Adam(params, lr=lr * dist.get_world_size())  # scaled again


def epoch_loader_never_telling() -> EpochLoader:
    """Drives its own epochs, and never calls sampler.set_epoch."""
    return EpochLoader(tells_the_epoch=False)


def ddp_for_accumulation() -> nn.Module:
    return DistributedDataParallel(Classifier())


def _halves(batch):
    inputs, labels = batch
    return list(zip(inputs.chunk(2), labels.chunk(2)))


def accumulating_step(model, batch, optimizer) -> torch.Tensor:
    """Two micro-steps per update; only the last one syncs."""
    optimizer.zero_grad()
    first, last = _halves(batch)
    with model.no_sync():
        loss = classifier_loss(model, first) / 2
        loss.backward()
    last_loss = classifier_loss(model, last) / 2
    last_loss.backward()
    optimizer.step()
    return loss.detach() + last_loss.detach()


def syncing_every_micro_step(model, batch, optimizer) -> torch.Tensor:
    """Two micro-steps per update, both synced: no_sync() is missing."""
    optimizer.zero_grad()
    total = 0.0
    for micro in _halves(batch):
        loss = classifier_loss(model, micro) / 2
        loss.backward()
        total = total + loss.detach()
    optimizer.step()
    return total


def self_initializing() -> nn.Module:
    """A model callable that starts the process group itself, unguarded."""
    dist.init_process_group("gloo")
    return Classifier()


def run_ranks_in_fresh_interpreter(module: str, function: str, store: str) -> None:
    """``module.function(rank, store)`` on 2 ranks forked from a fresh interpreter:
    forked from pytest, whose torch thread pools earlier tests started, a rank can
    wait forever on a lock no thread holds."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import sys, torch.multiprocessing as mp\n"
        f"from {module} import {function}\n"
        f"mp.start_processes({function}, args=(sys.argv[1],), nprocs=2,"
        " start_method='fork')\n"
    )
    command = [sys.executable, "-c", script, store]
    ran = subprocess.run(
        command, cwd=Path(__file__).parent, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
